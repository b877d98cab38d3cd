"""Boxes and masks over a media image, as data (W&B's box_data / mask_data layers): checked, normalised, rendered."""

from __future__ import annotations

import hashlib
import io
import math
from collections.abc import Mapping
from typing import Any

import numpy as np
from PIL import Image, UnidentifiedImageError

from ..commands.envelope import EventError
from .common import blob_bytes
from .image import decode_base64

MAX_LAYERS = 16          # box layers and mask layers each, per image
MAX_BOXES = 10_000       # per box layer
MAX_CLASSES = 1_000      # entries of one class_labels map
MAX_SCORES = 16          # score keys of one box
MAX_TEXT = 256           # a caption or class name
MAX_MASK_BYTES = 8 * 1024 * 1024
MASK_MIME = "image/png"
_POSITION_KEYS = ("minX", "maxX", "minY", "maxY")


def _text(value: object, where: str) -> str:
    if not isinstance(value, (str, int, float)) or isinstance(value, bool) or len(str(value)) > MAX_TEXT:
        raise EventError(f"{where} must be text of at most {MAX_TEXT} characters")
    return str(value)


def _number(value: object, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise EventError(f"{where} must be a finite number")
    return float(value)


def _class_id(value: object, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != int(value) or not 0 <= value < 2**31:
        raise EventError(f"{where} must be a non-negative integer")
    return int(value)


def _layer_name(name: object, where: str) -> str:
    if not isinstance(name, str) or not name or len(name) > MAX_TEXT:
        raise EventError(f"{where}: layer names must be non-empty text of at most {MAX_TEXT} characters")
    return name


def class_labels(value: object, where: str) -> dict[str, str]:
    """{class id: name} with the ids as strings (JSON's object keys), e.g. {"1": "cat"}."""
    if value is None:
        return {}
    if not isinstance(value, dict) or len(value) > MAX_CLASSES:
        raise EventError(f"{where}.class_labels must be an object of at most {MAX_CLASSES} id: name entries")
    out = {}
    for key, name in value.items():
        try:
            cid = int(key)
        except (TypeError, ValueError):
            raise EventError(f"{where}.class_labels: key {str(key)[:20]!r} is not a class id") from None
        out[str(_class_id(cid, f"{where}.class_labels key"))] = _text(name, f"{where}.class_labels[{key}]")
    return out


def _position(box: dict, where: str, width: int, height: int) -> list[float]:
    """[x0, y0, x1, y1] in pixels from W&B's minX/maxX/minY/maxY or middle/width/height, fractions unless
    domain is "pixel"."""
    pos = box.get("position")
    if not isinstance(pos, dict):
        raise EventError(f"{where}.position must be an object")
    domain = box.get("domain")
    if domain not in (None, "pixel"):
        raise EventError(f"{where}.domain must be \"pixel\" or absent (fractions of the image)")
    if all(k in pos for k in _POSITION_KEYS):
        x0, x1, y0, y1 = (_number(pos[k], f"{where}.position.{k}") for k in _POSITION_KEYS)
    elif "middle" in pos and "width" in pos and "height" in pos:
        mid = pos["middle"]
        if not isinstance(mid, (list, tuple)) or len(mid) != 2:
            raise EventError(f"{where}.position.middle must be [x, y]")
        mx, my = (_number(v, f"{where}.position.middle") for v in mid)
        w, h = _number(pos["width"], f"{where}.position.width"), _number(pos["height"], f"{where}.position.height")
        x0, x1, y0, y1 = mx - w / 2, mx + w / 2, my - h / 2, my + h / 2
    else:
        raise EventError(f"{where}.position needs minX, maxX, minY, maxY or middle, width, height")
    if x1 < x0 or y1 < y0:
        raise EventError(f"{where}.position: max must not be below min")
    sx, sy = (1.0, 1.0) if domain == "pixel" else (float(width), float(height))
    return [round(x0 * sx, 3), round(y0 * sy, 3), round(x1 * sx, 3), round(y1 * sy, 3)]


def _box(box: object, where: str, width: int, height: int) -> dict[str, Any]:
    if not isinstance(box, dict):
        raise EventError(f"{where} must be an object")
    out: dict[str, Any] = {"xyxy": _position(box, where, width, height),
                           "class_id": _class_id(box.get("class_id", 0), f"{where}.class_id")}
    scores = box.get("scores")
    if scores is not None:
        if not isinstance(scores, dict) or len(scores) > MAX_SCORES:
            raise EventError(f"{where}.scores must be an object of at most {MAX_SCORES} name: number entries")
        out["scores"] = {_text(k, f"{where}.scores key"): _number(v, f"{where}.scores[{k}]") for k, v in scores.items()}
    if box.get("box_caption") is not None:
        out["caption"] = _text(box["box_caption"], f"{where}.box_caption")
    return out


def _box_layers(value: object, where: str, width: int, height: int) -> dict[str, Any]:
    if not isinstance(value, dict) or len(value) > MAX_LAYERS:
        raise EventError(f"{where}.boxes must be an object of at most {MAX_LAYERS} named layers")
    out = {}
    for name, layer in value.items():
        w = f"{where}.boxes[{_layer_name(name, where)!r}]"
        if not isinstance(layer, dict) or not isinstance(layer.get("box_data"), list) \
                or len(layer["box_data"]) > MAX_BOXES:
            raise EventError(f"{w} must be {{box_data: [at most {MAX_BOXES} boxes], class_labels?}}")
        out[name] = {"boxes": [_box(b, f"{w}.box_data[{i}]", width, height) for i, b in enumerate(layer["box_data"])],
                     "class_labels": class_labels(layer.get("class_labels"), w)}
    return out


def read_mask(data: bytes, where: str, width: int, height: int) -> list[int]:
    """The class ids a mask PNG holds, refused unless it is an 8-bit grey PNG the size of its image."""
    if len(data) > MAX_MASK_BYTES:
        raise EventError(f"{where}: larger than {MAX_MASK_BYTES} bytes")
    try:
        with Image.open(io.BytesIO(data)) as img:
            if img.format != "PNG" or img.mode != "L":
                raise EventError(f"{where}: a mask must be an 8-bit greyscale PNG (class ids 0..255), "
                                 f"not {img.format} {img.mode}")
            if img.size != (width, height):
                raise EventError(f"{where}: the mask is {img.size[0]}x{img.size[1]}, its image {width}x{height}")
            ids = np.unique(np.asarray(img))  # the browser reads a grey PNG's value as the class id
    except EventError:
        raise
    except (UnidentifiedImageError, OSError, SyntaxError, ValueError) as exc:
        raise EventError(f"{where}: not a readable PNG mask ({exc})") from None
    return [int(v) for v in ids]


def _mask_layers(value: object, where: str, width: int, height: int, blobs: list[tuple[bytes, str]]
                 ) -> dict[str, Any]:
    if not isinstance(value, dict) or len(value) > MAX_LAYERS:
        raise EventError(f"{where}.masks must be an object of at most {MAX_LAYERS} named layers")
    out = {}
    for name, layer in value.items():
        w = f"{where}.masks[{_layer_name(name, where)!r}]"
        if not isinstance(layer, dict) or not isinstance(layer.get("png"), str):
            raise EventError(f"{w} must be {{png: <base64 8-bit PNG of class ids>, class_labels?}}")
        data = decode_base64(layer["png"], w, MAX_MASK_BYTES)
        present = read_mask(data, w, width, height)
        blobs.append((data, MASK_MIME))  # content-addressed: an unchanged mask across steps is stored once
        out[name] = {"blob": hashlib.sha256(data).hexdigest(), "classes": present,
                     "class_labels": class_labels(layer.get("class_labels"), w)}
    return out


def parse(rec: dict, where: str, width: int, height: int) -> tuple[dict[str, Any] | None, list[tuple[bytes, str]]]:
    """A record's `boxes` and `masks` as stored overlays ({"boxes": {layer: ...}, "masks": {layer: ...}}) and the
    mask PNGs to store as blobs; (None, []) when it has neither."""
    blobs: list[tuple[bytes, str]] = []
    out: dict[str, Any] = {}
    if rec.get("boxes") is not None:
        out["boxes"] = _box_layers(rec["boxes"], where, width, height)
    if rec.get("masks") is not None:
        out["masks"] = _mask_layers(rec["masks"], where, width, height, blobs)
    return (out or None), blobs


def check_stored(overlays: object, where: str, width: int, height: int, blobs: Mapping[str, bytes]) -> None:
    """Stored overlays (an archive's) as parse makes them: boxes in pixels, masks by blob reference."""
    if overlays is None:
        return
    if not isinstance(overlays, dict) or set(overlays) - {"boxes", "masks"}:
        raise EventError(f"{where}.overlays must be an object of boxes and masks")
    for name, layer in (overlays.get("boxes") or {}).items():
        w = f"{where}.overlays.boxes[{_layer_name(name, where)!r}]"
        if not isinstance(layer, dict) or not isinstance(layer.get("boxes"), list):
            raise EventError(f"{w} must be {{boxes: [...], class_labels}}")
        class_labels(layer.get("class_labels"), w)
        for i, box in enumerate(layer["boxes"]):
            xyxy = box.get("xyxy") if isinstance(box, dict) else None
            if not isinstance(xyxy, list) or len(xyxy) != 4:
                raise EventError(f"{w}.boxes[{i}].xyxy must be [x0, y0, x1, y1]")
            _box({**box, "domain": "pixel", "box_caption": box.get("caption"),
                  "position": dict(zip(("minX", "minY", "maxX", "maxY"), xyxy, strict=True))}, f"{w}.boxes[{i}]", 1, 1)
    for name, layer in (overlays.get("masks") or {}).items():
        w = f"{where}.overlays.masks[{_layer_name(name, where)!r}]"
        if not isinstance(layer, dict):
            raise EventError(f"{w} must be {{blob, classes, class_labels}}")
        present = read_mask(blob_bytes(layer.get("blob"), blobs, w), w, width, height)
        if layer.get("classes") != present:
            raise EventError(f"{w}.classes must be the mask's own class ids")
        class_labels(layer.get("class_labels"), w)


def render(overlays: dict[str, Any]) -> dict[str, Any]:
    """Stored overlays as the browser reads them: each mask with the URL of its PNG."""
    masks = {name: {**{k: v for k, v in layer.items() if k != "blob"}, "src": f"api/v1/blobs/{layer.get('blob', '')}"}
             for name, layer in (overlays.get("masks") or {}).items()}
    return {"boxes": overlays.get("boxes") or {}, "masks": masks}


def blob_refs(data: dict | None) -> list[str]:
    """The mask blobs a stored media record refers to beside its own picture."""
    masks = ((data or {}).get("overlays") or {}).get("masks") or {}
    return [str(layer["blob"]) for layer in masks.values() if isinstance(layer, dict) and layer.get("blob")]
