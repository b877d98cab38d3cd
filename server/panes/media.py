"""Media panes (TensorBoard's images, audio and text over steps): one picture, clip or text record per step."""

from __future__ import annotations

import html
import io
import math
import re
import wave
from collections.abc import Mapping

import markdown

from ..commands.envelope import EventError, PaneCommand
from ..live.deltas import Deltas
from ..store import PaneRecord, StepRow, Store, StoreTx
from . import overlays, stepped
from .common import blob_bytes
from .contract import ReadOptions, StoredStep
from .image import check_picture, decode_base64, decode_image
from .stepped import merge, mergeable  # noqa: F401  (PaneKind.merge and .mergeable)
from .text import MAX_TEXT, sanitize

# TensorBoard's text plugin (plugin_util.markdown_to_safe_html) keeps these tags of the Markdown's HTML and shows
# every other tag as literal text (bleach escapes it): `add_text("x", "a <b>b</b> c")` reads "a <b>b</b> c".
_TB_TAGS = frozenset({"ul", "ol", "li", "p", "pre", "code", "blockquote", "h1", "h2", "h3", "h4", "h5", "h6", "hr",
                      "br", "strong", "em", "a", "img", "table", "thead", "tbody", "td", "tr", "th"})
_RAW_TAG = re.compile(r"<!--.*?-->|<(/?)([A-Za-z][A-Za-z0-9-]*)\b[^>]*>", re.S)

KINDS = ("media",)
UPDATE_MODES = stepped.UPDATE_MODES
READ_OPTIONS: tuple[str, ...] = ()
TYPES = ("image", "audio", "text")
FORMATS = ("markdown", "plain", "html")
MAX_AUDIO_BYTES = 64 * 1024 * 1024
# Browsers play these; each is recognised by its first bytes so a mislabelled upload is refused.
AUDIO_MAGIC = {"audio/wav": (b"RIFF",), "audio/ogg": (b"OggS",), "audio/mpeg": (b"ID3", b"\xff\xfb", b"\xff\xf3"),
               "audio/flac": (b"fLaC",)}


def _image(rec: dict, where: str) -> tuple[dict, bytes, str]:
    data, mime, width, height = decode_image(rec, where)
    caption = rec.get("caption")
    out = {"type": "image", "mime": mime, "width": width, "height": height,
           "caption": None if caption is None else str(caption)}
    value_range = value_range_of(rec.get("value_range"), where)
    if value_range is not None:
        out["value_range"] = value_range
    return out, data, mime


def value_range_of(value: object, where: str) -> list[float] | None:
    """The [min, max] of the values a picture was min–max normalised from (the SDK's float images), or None."""
    if value is None:
        return None
    if not (isinstance(value, list) and len(value) == 2 and all(
            isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in value)
            and value[0] <= value[1]):
        raise EventError(f"{where}: value_range must be [min, max], two finite numbers")
    return [float(value[0]), float(value[1])]


def _audio(rec: dict, where: str) -> tuple[dict, bytes, str]:
    mime = rec.get("mime") or "audio/wav"
    if not isinstance(mime, str) or mime not in AUDIO_MAGIC:
        raise EventError(f"{where}: audio mime must be one of {', '.join(AUDIO_MAGIC)}")
    data = decode_base64(rec.get("data"), where, MAX_AUDIO_BYTES)
    return _audio_info(data, mime, rec.get("sample_rate"), where), data, mime


def _audio_info(data: bytes, mime: str, sample_rate: object, where: str) -> dict:
    if len(data) > MAX_AUDIO_BYTES or not data.startswith(AUDIO_MAGIC[mime]):
        raise EventError(f"{where}: data is not {mime} of at most {MAX_AUDIO_BYTES} bytes")
    out: dict = {"type": "audio", "mime": mime, "sample_rate": sample_rate, "frames": None}
    if mime == "audio/wav":
        try:
            with wave.open(io.BytesIO(data)) as w:
                out["sample_rate"], out["frames"] = w.getframerate(), w.getnframes()
        except (wave.Error, EOFError) as exc:
            raise EventError(f"{where}: not a readable WAV file ({exc})") from None
    return out


def _text(rec: dict, where: str) -> dict:
    text, fmt = rec.get("text"), rec.get("format", "markdown")
    if not isinstance(text, str) or len(text) > MAX_TEXT:
        raise EventError(f"{where}: text must be a string of at most {MAX_TEXT} characters")
    if fmt not in FORMATS:
        raise EventError(f"{where}: format must be one of {', '.join(FORMATS)}")
    return {"type": "text", "text": text, "format": fmt}


def _check(rec: dict, where: str) -> tuple[dict, bytes | None, str | None]:
    kind = rec.get("type")
    if kind == "image":
        return _image(rec, where)
    if kind == "audio":
        return _audio(rec, where)
    if kind == "text":
        return _text(rec, where), None, None
    raise EventError(f"{where}: type must be one of {', '.join(TYPES)}")


def validate(cmd: PaneCommand, raw: dict) -> list[stepped.Rec]:
    recs = stepped.parse_records(cmd, raw, _check)
    for i, (rec, raw_rec) in enumerate(zip(recs, raw["records"], strict=True)):
        if rec.data is not None and rec.data["type"] == "image":
            found, rec.extra_blobs = overlays.parse(raw_rec, f"media: records[{i}]", rec.data["width"],
                                                    rec.data["height"])
            if found is not None:
                rec.data["overlays"] = found
    if len({r.data["type"] for r in recs if r.data is not None}) > 1:  # _check gives every record data
        raise EventError("media: all records of a pane must have the same type")
    return recs


def _check_stored(data: dict, blob: str | None, where: str, blobs: Mapping[str, bytes]) -> None:
    """A stored record: data as _check made it, the blob (pictures and clips) what the data says it is."""
    kind = data.get("type")
    if kind == "text":
        if blob is not None:
            raise EventError(f"{where}: a text record has no blob")
        _text(data, where)
    elif kind == "image":
        check_picture({**data, "blob": blob}, blobs, where)
        value_range_of(data.get("value_range"), where)
        overlays.check_stored(data.get("overlays"), where, data["width"], data["height"], blobs)
    elif kind == "audio":
        mime, rate = data.get("mime"), data.get("sample_rate")
        if not isinstance(mime, str) or mime not in AUDIO_MAGIC:
            raise EventError(f"{where}: audio mime must be one of {', '.join(AUDIO_MAGIC)}")
        if rate is not None and (isinstance(rate, bool) or not isinstance(rate, (int, float))):
            raise EventError(f"{where}: sample_rate must be a number")
        info = _audio_info(blob_bytes(blob, blobs, where), mime, rate, where)
        if mime == "audio/wav" and (info["sample_rate"], info["frames"]) != (rate, data.get("frames")):
            raise EventError(f"{where}: sample_rate and frames must be the clip's own")
    else:
        raise EventError(f"{where}: type must be one of {', '.join(TYPES)}")


def check_stored(content: dict | None, steps: list[StoredStep], blobs: Mapping[str, bytes]) -> dict | None:
    content = stepped.check_stored_records("media", content, steps,
                                           lambda d, b, w: _check_stored(d, b, w, blobs), ("type",))
    types = {(data or {}).get("type") for _s, _w, data, _b in steps}
    if content.get("type") not in TYPES or len(types) > 1 or (types and types != {content["type"]}):
        raise EventError(f"media: content type and every record's type must be the same one of {', '.join(TYPES)}")
    return content


def apply(tx: StoreTx, cmd: PaneCommand, deltas: Deltas) -> None:
    kind = cmd.payload[0].data["type"]
    pane = tx.get_pane(cmd.env, cmd.win)
    stored = (pane.content or {}).get("type") if pane is not None and pane.kind in KINDS else None
    if cmd.op == "update" and stored is not None and stored != kind:
        raise EventError(f"media pane {cmd.win!r} holds {stored} records, not {kind}")
    stepped.apply_records(tx, cmd, deltas, {"type": kind})


def _html(data: dict) -> str:
    text, fmt = data.get("text", ""), data.get("format")
    if fmt == "markdown":
        text = _escape_raw_html(markdown.markdown(text, extensions=["tables", "fenced_code"]))
    elif fmt == "plain":
        text = f"<pre>{text.replace('&', '&amp;').replace('<', '&lt;').replace('>', '&gt;')}</pre>"
    return sanitize(text)  # on every read, like text panes, so sanitizer fixes reach old data


def _escape_raw_html(out: str) -> str:
    """As TensorBoard: tags outside its list become text, comments go (the sanitizer then checks attributes)."""
    def one(m: re.Match) -> str:
        if m.group(2) is None:
            return ""
        return m.group(0) if m.group(2).lower() in _TB_TAGS else html.escape(m.group(0), quote=False)
    return _RAW_TAG.sub(one, out)


def render_record(row: StepRow) -> dict:
    data = row.data or {}
    out = {**stepped.record_head(row), "type": data.get("type")}
    if data.get("type") == "text":
        out.update(html=_html(data), format=data.get("format"))
    else:
        out["src"] = f"api/v1/blobs/{row.blob or ''}"
        out.update({k: data.get(k) for k in ("mime", "width", "height", "caption", "sample_rate", "frames",
                                             "value_range") if k in data})
        if data.get("overlays"):
            out["overlays"] = overlays.render(data["overlays"])
    return out


def render(store: Store, pane: PaneRecord, budget: int, x0: float | None, x1: float | None,
           options: ReadOptions) -> dict:
    out, n = stepped.render_index(store, pane)
    out["type"] = (pane.content or {}).get("type")
    out["latest"] = stepped.latest(store, pane, n, render_record)
    return out
