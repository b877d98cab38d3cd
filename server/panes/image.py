"""Image panes: the picture is a content-addressed blob; the pane holds its reference, size and (optionally) history."""

from __future__ import annotations

import base64
import binascii
import io
from collections.abc import Mapping

from PIL import Image, UnidentifiedImageError

from ..commands.envelope import EventError, PaneCommand
from ..live.deltas import Deltas
from ..store import PaneRecord, Store, StoreTx
from .common import blob_bytes, merged_opts, no_steps, stored_object, title_of
from .contract import ReadOptions, StoredStep

KINDS = ("image",)
UPDATE_MODES = ("replace", "append")  # append: keep the previous images as history (Visdom's store_history)
READ_OPTIONS: tuple[str, ...] = ()
mergeable = merge = None  # each event is applied on its own
render_record = None  # not a stepped kind: no records for the /steps API
MAX_HISTORY = 1000  # entries kept in a pane's history (oldest dropped); the blobs themselves stay stored
MAX_IMAGE_BYTES = 32 * 1024 * 1024
# Pixels of one picture: a few KB of PNG can claim gigapixels (a decompression bomb); PIL itself errors only
# above 2 x Image.MAX_IMAGE_PIXELS (179 Mpx) and merely warns below that.
MAX_IMAGE_PIXELS = 64 * 1024 * 1024
MIME_BY_FORMAT = {"PNG": "image/png", "JPEG": "image/jpeg", "GIF": "image/gif", "WEBP": "image/webp"}


def decode_base64(value: object, what: str, limit: int = MAX_IMAGE_BYTES) -> bytes:
    if not isinstance(value, str):
        raise EventError(f"{what}: data must be a base64 string")
    if len(value) > limit * 4 // 3 + 4:
        raise EventError(f"{what}: larger than {limit} bytes")
    try:
        return base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise EventError(f"{what}: data is not valid base64 ({exc})") from None


def decode_image(image: object, what: str = "image") -> tuple[bytes, str, int, int]:
    """Bytes, mime, width and height of a base64 picture, refused unless PIL reads it whole."""
    if not isinstance(image, dict) or not isinstance(image.get("data"), str):
        raise EventError(f"{what}: expected {{mime, data: <base64>}}")
    data = decode_base64(image["data"], what)
    return (data, *read_image(data, what))


def read_image(data: bytes, what: str = "image") -> tuple[str, int, int]:
    """Mime, width and height of a picture's bytes, refused unless PIL reads it whole."""
    if len(data) > MAX_IMAGE_BYTES:
        raise EventError(f"{what}: larger than {MAX_IMAGE_BYTES} bytes")
    try:
        with Image.open(io.BytesIO(data)) as img:
            fmt, (width, height) = img.format, img.size
            if width * height > MAX_IMAGE_PIXELS:
                raise EventError(f"{what}: {width}x{height} is more than {MAX_IMAGE_PIXELS} pixels")
            img.verify()  # catches truncated and corrupt files before they are stored
    except EventError:
        raise
    except Image.DecompressionBombError as exc:
        raise EventError(f"{what}: more than {MAX_IMAGE_PIXELS} pixels ({exc})") from None
    except (UnidentifiedImageError, OSError, SyntaxError, ValueError) as exc:
        raise EventError(f"{what}: not a readable image ({exc})") from None
    mime = MIME_BY_FORMAT.get(fmt or "")
    if mime is None:
        raise EventError(f"{what}: format {fmt} not supported (use PNG, JPEG, GIF or WebP)")
    return mime, width, height


def check_picture(entry: object, blobs: Mapping[str, bytes], what: str) -> None:
    """A stored picture reference {blob, mime, width, height[, caption]}: its blob must be a picture that
    decode_image accepts, and mime, width and height must be that picture's."""
    if not isinstance(entry, dict):
        raise EventError(f"{what} must be an object {{blob, mime, width, height}}")
    mime, width, height = read_image(blob_bytes(entry.get("blob"), blobs, what), what)
    for key, value in (("mime", mime), ("width", width), ("height", height)):
        if entry.get(key) != value or isinstance(entry.get(key), bool):
            raise EventError(f"{what}: {key} must be the picture's own ({value!r}), not {str(entry.get(key))[:40]!r}")
    caption = entry.get("caption")
    if caption is not None and not isinstance(caption, (str, int, float)):
        raise EventError(f"{what}: caption must be text")


def validate(cmd: PaneCommand, raw: dict) -> tuple[bytes, str, int, int]:
    return decode_image(raw.get("image"))


def apply(tx: StoreTx, cmd: PaneCommand, deltas: Deltas) -> None:
    data, mime, width, height = cmd.payload
    pane = tx.get_pane(cmd.env, cmd.win)
    if pane is not None and cmd.op == "update" and pane.kind not in KINDS:
        raise EventError(f"pane {cmd.win!r} is a {pane.kind} pane, not image")
    content = {"blob": tx.put_blob(data, mime), "mime": mime, "width": width, "height": height}
    entry = {**content, "caption": cmd.opts.get("caption")}
    if cmd.op == "set" or pane is None:
        if cmd.opts.get("store_history") or cmd.mode == "append":
            content["history"] = [entry]
        pane = tx.put_pane(cmd.env, cmd.win, "image", title_of(cmd.opts), cmd.opts, content)
    else:
        opts = merged_opts(pane, cmd)
        if cmd.mode == "append":
            old = pane.content or {}
            history = old.get("history") or ([{k: v for k, v in old.items() if k != "history"}] if old else [])
            content["history"] = (history + [entry])[-MAX_HISTORY:]
        pane = tx.update_pane(pane, content=content, opts=opts, title=title_of(opts))
    deltas.pane(pane.env, pane.win, pane.version)


def check_stored(content: dict | None, steps: list[StoredStep], blobs: Mapping[str, bytes]) -> dict | None:
    no_steps("image", steps)
    content = stored_object(content, "image", ("blob", "mime", "width", "height", "history"))
    check_picture(content, blobs, "image")
    history = content.get("history")
    if history is not None:
        if not isinstance(history, list) or len(history) > MAX_HISTORY:
            raise EventError(f"image: history must be a list of at most {MAX_HISTORY} pictures")
        for i, entry in enumerate(history):
            check_picture(entry, blobs, f"image: history[{i}]")
    return content


def render(store: Store, pane: PaneRecord, budget: int, x0: float | None, x1: float | None,
           options: ReadOptions) -> dict:
    content = pane.content or {}
    out = {"src": f"api/v1/blobs/{content.get('blob', '')}", "mime": content.get("mime"),
           "width": content.get("width"), "height": content.get("height"), "caption": pane.opts.get("caption")}
    if content.get("history"):
        out["history"] = [{"src": f"api/v1/blobs/{h.get('blob', '')}", "mime": h.get("mime"), "width": h.get("width"),
                           "height": h.get("height"), "caption": h.get("caption")} for h in content["history"]]
    return out
