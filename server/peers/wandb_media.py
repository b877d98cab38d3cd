"""W&B media that paneboard shows: histograms, images (files beside the run), tables (as Markdown text), audio,
HTML (sanitized when shown, as any HTML text record) and GIF videos (animated pictures), one or a list per step."""

from __future__ import annotations

import base64
import io
import json
from pathlib import Path
from typing import Any

import numpy as np

from paneboard.protocol import MAX_BUCKETS

MIME = {"png": "image/png", "jpg": "image/jpeg", "jpeg": "image/jpeg", "gif": "image/gif", "webp": "image/webp"}
AUDIO_MIME = {"wav": "audio/wav", "ogg": "audio/ogg", "mp3": "audio/mpeg", "flac": "audio/flac"}
MAX_TABLE_ROWS = 1000  # a table shown as text: the first rows say what it holds
# W&B's list of media per step (wandb.log({"k": [wandb.Audio(...), ...]})): list type -> key of its items' dicts
LISTS = {"audio": "audio", "videos": "videos", "html": "html"}
IMAGE_LISTS = ("images/separated", "images")


def step_records(obj: dict[str, Any], files: Path, step: float, wall: float
                 ) -> tuple[list[tuple[str, dict[str, Any]]], list[str]]:
    """(pane kind, record) of each media object a logged value holds (a list holds several, shown at one step),
    and the W&B type of each one paneboard does not show."""
    kind = obj.get("_type")
    if kind in IMAGE_LISTS and isinstance(obj.get("filenames"), list):
        fmt = obj.get("format")
        items: list[Any] = [{"_type": "image-file", "path": name, "format": fmt} for name in obj["filenames"]]
    elif kind in LISTS and isinstance(obj.get(LISTS[str(kind)]), list):
        items = obj[LISTS[str(kind)]]
    else:
        found = record(obj, files, step, wall)
        return ([found], []) if found is not None else ([], [str(kind)])
    captions = obj.get("captions")  # False when none of the list's items has one
    found_all, left = [], []
    for k, item in enumerate(items):
        if not isinstance(item, dict):
            left.append(str(kind))
            continue
        if isinstance(captions, list) and k < len(captions) and captions[k] not in (None, False, "") \
                and item.get("caption") is None:
            item = {**item, "caption": captions[k]}
        found = record(item, files, step, wall)
        if found is None:
            left.append(str(item.get("_type")))
        else:
            found_all.append(found)
    return found_all, left


def record(obj: dict[str, Any], files: Path, step: float, wall: float) -> tuple[str, dict[str, Any]] | None:
    """(pane kind, step record) for a logged W&B media object, or None for a kind paneboard does not show."""
    kind = obj.get("_type")
    base = {"step": step, "wall": wall}
    if kind == "histogram":
        counts, bins = obj.get("values"), obj.get("bins")
        packed = obj.get("packedBins")
        if bins is None and isinstance(packed, dict):
            bins = [packed["min"] + packed["size"] * k for k in range(int(packed["count"]) + 1)]
        if not isinstance(counts, list) or not isinstance(bins, list) or len(bins) != len(counts) + 1 \
                or not 1 <= len(counts) <= MAX_BUCKETS:
            return None
        # W&B gives n+1 edges; a paneboard (TensorBoard) bucket is named by its right edge
        return "histogram", {**base, "limits": bins[1:], "counts": counts, "min": bins[0], "max": bins[-1]}
    if kind == "image-file":
        path = files / str(obj.get("path", ""))
        mime = MIME.get(str(obj.get("format") or path.suffix.lstrip(".")).lower())
        if mime is None or not path.is_file() or files not in path.resolve().parents:
            return None
        rec = {**base, "type": "image", "data": base64.b64encode(path.read_bytes()).decode(), "mime": mime}
        if obj.get("caption") is not None:
            rec["caption"] = str(obj["caption"])
        rec.update(_overlays(obj, files))
        return "media", rec
    if kind == "table-file":
        path = files / str(obj.get("path", ""))
        if not path.is_file() or files not in path.resolve().parents:
            return None
        try:
            table = json.loads(path.read_text())
        except (OSError, ValueError):
            return None
        return "media", {**base, "type": "text", "format": "markdown", "text": markdown_table(table)}
    if kind in ("audio-file", "video-file", "html-file"):
        return _file_record(str(kind), obj, files, base)
    return None


def _json_file(obj: Any, files: Path) -> Any:
    path = _media_file(obj, files) if isinstance(obj, dict) else None
    try:
        return None if path is None else json.loads(path.read_text())
    except (OSError, ValueError):
        return None


def _overlays(obj: dict[str, Any], files: Path) -> dict[str, Any]:
    """An image's boxes (a boxes2D JSON file per layer) and masks (a PNG of class ids per layer, named by the
    image's classes file) as the wire's overlay fields; a layer whose file is missing is left out."""
    classes = _json_file(obj.get("classes"), files) or {}
    names = {str(c["id"]): str(c.get("name", c["id"])) for c in classes.get("class_set") or []
             if isinstance(c, dict) and "id" in c}
    out: dict[str, Any] = {}
    boxes = {name: layer for name, layer in ((n, _json_file(v, files)) for n, v in (obj.get("boxes") or {}).items())
             if isinstance(layer, dict) and isinstance(layer.get("box_data"), list)}
    if boxes:
        out["boxes"] = {n: {"box_data": v["box_data"], "class_labels": {**names, **(v.get("class_labels") or {})}}
                        for n, v in boxes.items()}
    if not names:  # no classes file found: the boxes' labels name the same ids (W&B shares one class set per image)
        names = {k: str(v) for layer in boxes.values() for k, v in (layer.get("class_labels") or {}).items()}
    masks = {}
    for name, layer in (obj.get("masks") or {}).items():
        path = _media_file(layer, files) if isinstance(layer, dict) else None
        if path is not None:
            masks[name] = {"png": _grey_png(path.read_bytes()), "class_labels": names}
    if masks:
        out["masks"] = masks
    return out


def _grey_png(data: bytes) -> str:
    """A W&B mask PNG as the 8-bit grey PNG of class ids paneboard stores (W&B may write it as RGB or palette)."""
    from PIL import Image  # noqa: PLC0415  (the importer's only use of PIL)

    with Image.open(io.BytesIO(data)) as img:
        if img.mode != "L":  # a palette image's indices are the class ids, an RGB one's ids are its red channel
            img = img.getchannel(0) if img.mode in ("RGB", "RGBA") else Image.fromarray(np.asarray(img).astype(np.uint8))
        buf = io.BytesIO()
        img.save(buf, format="PNG")
    return base64.b64encode(buf.getvalue()).decode()


def _media_file(obj: dict[str, Any], files: Path) -> Path | None:
    """The logged file beside the run (never outside its files/ folder), or None."""
    path = files / str(obj.get("path", ""))
    if not path.is_file() or files.resolve() not in path.resolve().parents:
        return None
    return path


def _file_record(kind: str, obj: dict[str, Any], files: Path, base: dict[str, Any]) -> tuple[str, dict[str, Any]] | None:
    """Audio clips, GIF videos (mp4/webm/ogg have no pane yet: None) and HTML pages as media records."""
    path = _media_file(obj, files)
    if path is None:
        return None
    ext = path.suffix.lstrip(".").lower()
    if kind == "html-file":
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return None
        return "media", {**base, "type": "text", "format": "html", "text": text}
    if kind == "audio-file":
        mime = AUDIO_MIME.get(ext)
        if mime is None:
            return None
        return "media", {**base, "type": "audio", "mime": mime, "data": base64.b64encode(path.read_bytes()).decode()}
    if ext != "gif":
        return None
    rec = {**base, "type": "image", "mime": "image/gif", "data": base64.b64encode(path.read_bytes()).decode()}
    if obj.get("caption") is not None:
        rec["caption"] = str(obj["caption"])
    return "media", rec


def markdown_table(table: dict[str, Any]) -> str:
    columns = [str(c) for c in table.get("columns") or []]
    rows = table.get("data") or []

    def cell(v: Any) -> str:
        return str(v).replace("|", "\\|").replace("\n", " ")

    lines = ["| " + " | ".join(map(cell, columns)) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(map(cell, row)) + " |" for row in rows[:MAX_TABLE_ROWS]]
    if len(rows) > MAX_TABLE_ROWS:
        lines.append(f"\n({len(rows) - MAX_TABLE_ROWS:,} more rows)")
    return "\n".join(lines)
