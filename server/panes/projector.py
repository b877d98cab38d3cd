"""Projector panes (TensorBoard's add_embedding): an N×D matrix, metadata and sprite stored as blobs; projections by API."""

from __future__ import annotations

import io
import math
from collections.abc import Mapping

import numpy as np
import orjson
from PIL import Image, UnidentifiedImageError

from .. import projection
from ..commands.envelope import EventError, PaneCommand
from ..live.deltas import Deltas
from ..store import PaneRecord, Store, StoreTx
from .common import blob_bytes, merged_opts, no_steps, stored_object, title_of
from .contract import ReadOptions, StoredStep
from .image import decode_base64

KINDS = ("projector",)
UPDATE_MODES = ("replace",)  # an embedding is replaced whole (a new step is a new pane: projector/<tag>/<step>)
READ_OPTIONS: tuple[str, ...] = ()
mergeable = merge = None  # each event is applied on its own
render_record = None  # not a stepped kind: no records for the /steps API
MAX_POINTS = 1_000_000
MAX_DIMS = 10_000
MAX_COLUMNS = 100
MAX_SPRITE_PX = 8192  # TensorBoard's projector limit on the sprite's side


def _count(value: object, what: str, low: int, high: int) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
        raise EventError(f"projector: {what} must be an integer in {low}..{high:,}; got {value!r}")
    return value


def _matrix(raw: object) -> tuple[int, int, bytes]:
    if not isinstance(raw, dict):
        raise EventError('projector: matrix must be {"shape": [N, D], "dtype": "float32", "data": base64}')
    shape = raw.get("shape")
    if not isinstance(shape, list) or len(shape) != 2:
        raise EventError(f"projector: matrix.shape must be [N, D]; got {shape!r}")
    n = _count(shape[0], "matrix.shape N (points)", 1, MAX_POINTS)
    d = _count(shape[1], "matrix.shape D (dimensions)", 1, MAX_DIMS)
    if raw.get("dtype") != "float32":
        raise EventError(f"projector: matrix.dtype must be float32; got {raw.get('dtype')!r}")
    text, need = raw.get("data"), n * d * 4
    if isinstance(text, str):  # the size from the base64 length, before decoding anything big
        size = len(text) // 4 * 3 - len(text[-2:]) + len(text[-2:].rstrip("="))
        if size != need:
            raise EventError(f"projector: matrix.data has {size} bytes; shape {n}×{d} of float32 needs {need}")
    return n, d, _matrix_bytes(decode_base64(text, "projector: matrix", need), n, d)


def _matrix_bytes(data: bytes, n: int, d: int) -> bytes:
    need = n * d * 4
    if len(data) != need:
        raise EventError(f"projector: matrix.data has {len(data)} bytes; shape {n}×{d} of float32 needs {need}")
    bad = ~np.isfinite(np.frombuffer(data, dtype="<f4").reshape(n, d)).all(axis=1)
    if bad.any():
        raise EventError(f"projector: matrix row {int(bad.argmax())} has NaN or infinite values")
    return data


def _metadata(raw: object, n: int) -> tuple[list[str], bytes] | None:
    if raw is None:
        return None
    if not isinstance(raw, dict):
        raise EventError('projector: metadata must be null or {"header": [names], "rows": [[str, ...], ...]}')
    header, rows = raw.get("header"), raw.get("rows")
    if not isinstance(header, list) or not 1 <= len(header) <= MAX_COLUMNS or \
            not all(isinstance(h, str) for h in header):
        raise EventError(f"projector: metadata.header must be a list of 1..{MAX_COLUMNS} column names (strings)")
    if not isinstance(rows, list) or len(rows) != n:
        got = len(rows) if isinstance(rows, list) else type(rows).__name__
        raise EventError(f"projector: metadata.rows must have one row per point ({n}); got {got}")
    width = len(header)
    for i, row in enumerate(rows):
        if not isinstance(row, list) or len(row) != width or not all(isinstance(v, str) for v in row):
            raise EventError(f"projector: metadata row {i} must be a list of {width} strings (one per column)")
    return header, orjson.dumps({"header": header, "rows": rows})


def _sprite(raw: object, n: int) -> tuple[bytes, list[int], list[int]] | None:
    if raw is None:
        return None
    if not isinstance(raw, dict):
        raise EventError('projector: sprite must be null or {"data": base64 PNG, "single_image_dim": [w, h]}')
    dim = raw.get("single_image_dim")
    if not isinstance(dim, list) or len(dim) != 2:
        raise EventError(f"projector: sprite.single_image_dim must be [w, h]; got {dim!r}")
    w = _count(dim[0], "sprite.single_image_dim w", 1, MAX_SPRITE_PX)
    h = _count(dim[1], "sprite.single_image_dim h", 1, MAX_SPRITE_PX)
    data = decode_base64(raw.get("data"), "projector: sprite", 64 * 1024 * 1024)
    return data, [w, h], _sprite_size(data, n, w, h)


def _sprite_size(data: bytes, n: int, w: int, h: int) -> list[int]:
    try:
        with Image.open(io.BytesIO(data)) as img:
            fmt, (width, height) = img.format, img.size
            img.verify()  # truncated or corrupt files are refused before anything is stored
    except (UnidentifiedImageError, OSError, SyntaxError, Image.DecompressionBombError) as exc:
        raise EventError(f"projector: sprite is not a readable image ({exc})") from None
    if fmt != "PNG":
        raise EventError(f"projector: sprite must be a PNG; got {fmt}")
    if width > MAX_SPRITE_PX or height > MAX_SPRITE_PX:
        raise EventError(f"projector: sprite is {width}×{height}; at most {MAX_SPRITE_PX} px a side")
    per_row = math.ceil(math.sqrt(n))  # torch's make_sprite: a grid of ceil(sqrt(N)) thumbnails per row
    need = (per_row * w, math.ceil(n / per_row) * h)
    if width < need[0] or height < need[1]:
        raise EventError(f"projector: sprite is {width}×{height}; {n} thumbnails of {w}×{h} in rows of {per_row} "
                         f"need at least {need[0]}×{need[1]}")
    return [width, height]


def validate(cmd: PaneCommand, raw: dict) -> dict:
    p = raw.get("projector")
    if not isinstance(p, dict):
        raise EventError('projector: expected projector: {"step", "matrix", "metadata", "sprite"}')
    step = p.get("step", 0)
    if not isinstance(step, int) or isinstance(step, bool):
        raise EventError(f"projector: step must be an integer; got {step!r}")
    n, d, data = _matrix(p.get("matrix"))
    return {"step": step, "n": n, "d": d, "matrix": data, "metadata": _metadata(p.get("metadata"), n),
            "sprite": _sprite(p.get("sprite"), n)}


def check_stored(content: dict | None, steps: list[StoredStep], blobs: Mapping[str, bytes]) -> dict | None:
    """What apply stores: sizes, and the matrix, metadata and sprite blobs, each checked as validate checks them."""
    no_steps("projector", steps)
    c = stored_object(content, "projector", ("step", "n", "d", "matrix", "columns", "metadata", "sprite",
                                             "single_image_dim", "sprite_size"))
    step = c.get("step")
    if not isinstance(step, int) or isinstance(step, bool):
        raise EventError(f"projector: step must be an integer; got {str(step)[:40]!r}")
    n, d = _count(c.get("n"), "n (points)", 1, MAX_POINTS), _count(c.get("d"), "d (dimensions)", 1, MAX_DIMS)
    _matrix_bytes(blob_bytes(c.get("matrix"), blobs, "projector: matrix"), n, d)
    if c.get("metadata") is None:
        if c.get("columns"):
            raise EventError("projector: columns without metadata")
    else:
        try:
            meta = orjson.loads(blob_bytes(c["metadata"], blobs, "projector: metadata"))
        except orjson.JSONDecodeError:
            raise EventError("projector: metadata is not JSON") from None
        header, _rows = _metadata(meta, n) or ([], b"")
        if c.get("columns") != header:
            raise EventError("projector: columns must be the metadata's header")
    if c.get("sprite") is not None:
        dim = c.get("single_image_dim")
        if not isinstance(dim, list) or len(dim) != 2:
            raise EventError("projector: single_image_dim must be [w, h]")
        w = _count(dim[0], "single_image_dim w", 1, MAX_SPRITE_PX)
        h = _count(dim[1], "single_image_dim h", 1, MAX_SPRITE_PX)
        if c.get("sprite_size") != _sprite_size(blob_bytes(c["sprite"], blobs, "projector: sprite"), n, w, h):
            raise EventError("projector: sprite_size must be the sprite's own size")
    return c


def apply(tx: StoreTx, cmd: PaneCommand, deltas: Deltas) -> None:
    p = cmd.payload
    pane = tx.get_pane(cmd.env, cmd.win)
    if pane is not None and cmd.op == "update" and pane.kind not in KINDS:
        raise EventError(f"pane {cmd.win!r} is a {pane.kind} pane, not projector")
    # Everything big is a content-addressed blob: the pane JSON stays small, a re-sent embedding costs nothing.
    content = {"step": p["step"], "n": p["n"], "d": p["d"],
               "matrix": tx.put_blob(p["matrix"], "application/octet-stream"),
               "columns": [], "metadata": None, "sprite": None, "single_image_dim": None, "sprite_size": None}
    if p["metadata"] is not None:
        header, rows_json = p["metadata"]
        content.update(columns=header, metadata=tx.put_blob(rows_json, "application/json"))
    if p["sprite"] is not None:
        sprite, dim, size = p["sprite"]
        content.update(sprite=tx.put_blob(sprite, "image/png"), single_image_dim=dim, sprite_size=size)
    if pane is None or cmd.op == "set":
        pane = tx.put_pane(cmd.env, cmd.win, "projector", title_of(cmd.opts), cmd.opts, content)
    else:
        opts = merged_opts(pane, cmd)
        pane = tx.update_pane(pane, content=content, opts=opts, title=title_of(opts))
    deltas.pane(pane.env, pane.win, pane.version)


def render(store: Store, pane: PaneRecord, budget: int, x0: float | None, x1: float | None,
           options: ReadOptions) -> dict:
    c = pane.content or {}
    return {"n": c.get("n"), "d": c.get("d"), "step": c.get("step"), "columns": c.get("columns") or [],
            "has_metadata": bool(c.get("metadata")), "has_sprite": bool(c.get("sprite")),
            "sprite": f"api/v1/blobs/{c['sprite']}" if c.get("sprite") else None,
            "single_image_dim": c.get("single_image_dim"), "sprite_size": c.get("sprite_size"),
            "budgets": {kind: projection.budget(kind) for kind in ("pca", "pca_fit", "tsne", "umap")},
            "components": min(projection.PCA_COMPONENTS, c.get("n") or 0, c.get("d") or 0)}
