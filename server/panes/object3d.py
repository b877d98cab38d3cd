"""3D point cloud panes (W&B's Object3D): one cloud per step, its points a float32 blob, thinned by voxel grid on read."""

from __future__ import annotations

import base64
import math
from collections.abc import Mapping

import numpy as np

from paneboard.protocol import CLOUD_COLUMNS as COLUMNS
from paneboard.protocol import MAX_CLOUD_BOXES as MAX_BOXES
from paneboard.protocol import MAX_CLOUD_POINTS as MAX_POINTS

from ..commands.envelope import EventError, PaneCommand
from ..live.deltas import Deltas
from ..store import PaneRecord, StepRow, Store, StoreTx
from . import stepped
from .common import blob_bytes
from .contract import ReadOptions, StoredStep
from .image import decode_base64
from .stepped import merge, mergeable  # noqa: F401  (PaneKind.merge and .mergeable)
from .voxels import voxel_pick

KINDS = ("object3d",)
UPDATE_MODES = stepped.UPDATE_MODES
READ_OPTIONS: tuple[str, ...] = ()
MIME = "application/x-paneboard-points"  # little-endian float32, row-major N x cols
DEFAULT_BUDGET = 50_000  # points drawn when the read names no budget: scatter3d stays interactive in WebGL
MAX_BUDGET = 1_000_000


def _boxes(value: object, where: str) -> list[dict]:
    if value is None:
        return []
    if not isinstance(value, list) or len(value) > MAX_BOXES:
        raise EventError(f"{where}: boxes must be a list of at most {MAX_BOXES} boxes")
    out = []
    for i, box in enumerate(value):
        at = f"{where}.boxes[{i}]"
        if not isinstance(box, dict):
            raise EventError(f"{at} must be an object {{corners, label, color}}")
        corners = box.get("corners")
        if not (isinstance(corners, list) and len(corners) == 8 and all(
                isinstance(c, list) and len(c) == 3 and all(_finite(v) for v in c) for c in corners)):
            raise EventError(f"{at}.corners must be 8 points [x, y, z] of finite numbers")
        one: dict = {"corners": [[float(v) for v in c] for c in corners]}
        label, color = box.get("label"), box.get("color")
        if label is not None:
            if not isinstance(label, str) or len(label) > 256:
                raise EventError(f"{at}.label must be text of at most 256 characters")
            one["label"] = label
        if color is not None:
            if not (isinstance(color, list) and len(color) == 3 and all(_finite(v) and 0 <= v <= 255 for v in color)):
                raise EventError(f"{at}.color must be [r, g, b] in 0..255")
            one["color"] = [float(v) for v in color]
        out.append(one)
    return out


def _finite(v: object) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def _shape(value: object, where: str) -> tuple[int, int]:
    if not (isinstance(value, list) and len(value) == 2 and all(isinstance(v, int) and not isinstance(v, bool)
                                                                 for v in value)):
        raise EventError(f"{where}: points.shape must be [N, columns]")
    n, cols = value
    if cols not in COLUMNS or not 1 <= n <= MAX_POINTS:
        raise EventError(f"{where}: points must be N×3, N×4 or N×6 with 1..{MAX_POINTS} points, not {n}×{cols}")
    return n, cols


def _points(data: bytes, n: int, cols: int, where: str) -> np.ndarray:
    if len(data) != n * cols * 4:
        raise EventError(f"{where}: points data must be {n}×{cols} float32 ({n * cols * 4} bytes), not {len(data)}")
    arr = np.frombuffer(data, dtype="<f4").reshape(n, cols)
    if not np.isfinite(arr).all():
        raise EventError(f"{where}: points must be finite numbers")
    return arr


def _check(rec: dict, where: str) -> tuple[dict, bytes, str]:
    pts = rec.get("points")
    if not isinstance(pts, dict):
        raise EventError(f"{where}: points must be {{shape: [N, columns], data: <base64 float32>}}")
    n, cols = _shape(pts.get("shape"), where)
    data = decode_base64(pts.get("data"), f"{where}: points", MAX_POINTS * 6 * 4)
    _points(data, n, cols, where)
    caption = rec.get("caption")
    out = {"n": n, "cols": cols, "boxes": _boxes(rec.get("boxes"), where),
           "caption": None if caption is None else str(caption)[:1024]}
    return out, data, MIME


def validate(cmd: PaneCommand, raw: dict) -> list[stepped.Rec]:
    return stepped.parse_records(cmd, raw, _check)


def apply(tx: StoreTx, cmd: PaneCommand, deltas: Deltas) -> None:
    stepped.apply_records(tx, cmd, deltas)


def check_stored(content: dict | None, steps: list[StoredStep], blobs: Mapping[str, bytes]) -> dict | None:
    def one(data: dict, blob: str | None, where: str) -> None:
        n, cols = _shape([data.get("n"), data.get("cols")], where)
        _points(blob_bytes(blob, blobs, where), n, cols, where)
        _boxes(data.get("boxes"), where)

    return stepped.check_stored_records("object3d", content, steps, one)


def thinned(data: bytes, n: int, cols: int, budget: int) -> dict:
    """At most `budget` of the cloud's points, one per voxel of a grid (sparse regions keep theirs), in the cloud's
    order, as base64 float32 rows: the browser decodes them into typed arrays without parsing numbers."""
    arr = np.frombuffer(data, dtype="<f4").reshape(n, cols)
    if n > budget:
        arr = arr[voxel_pick(arr[:, :3], budget)]
    return {"shown": len(arr), "points": base64.b64encode(np.ascontiguousarray(arr).tobytes()).decode("ascii")}


def render_record(row: StepRow) -> dict:
    data = row.data or {}
    return {**stepped.record_head(row), "n": data.get("n"), "cols": data.get("cols"), "boxes": data.get("boxes") or [],
            "caption": data.get("caption")}


def read_points(store: Store, row: StepRow, budget: int) -> dict:
    """A record with its points thinned to `budget` (the blob read here: records alone do not carry them)."""
    out = render_record(row)
    found = store.get_blob(row.blob or "")
    if found is None:
        raise ValueError(f"object3d record {row.idx}: points blob missing")
    return {**out, **thinned(found[1], int(out["n"]), int(out["cols"]), budget)}


def render(store: Store, pane: PaneRecord, budget: int, x0: float | None, x1: float | None,
           options: ReadOptions) -> dict:
    # The newest record without its points: an env's pane list stays small, the browser reads them from /points
    # with its own budget (a line chart's point budget means nothing to a cloud).
    out, n = stepped.render_index(store, pane)
    out["latest"] = stepped.latest(store, pane, n, render_record)
    return out
