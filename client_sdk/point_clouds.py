"""3D point clouds on the wire: N×3 (xyz), N×4 (xyz + category) or N×6 (xyz + RGB 0–255) as float32 bytes, with
W&B's 3D boxes ({"corners": 8×3, "label", "color"}); Object3D and Client.point_cloud both send these records."""

from __future__ import annotations

import base64
import math
from collections.abc import Mapping, Sequence
from time import time as _now
from typing import Any

import numpy as np

from .convert import to_numpy
from .protocol import CLOUD_COLUMNS as COLUMNS
from .protocol import MAX_CLOUD_BOXES as MAX_BOXES
from .protocol import MAX_CLOUD_POINTS as MAX_POINTS
from .protocol import new_win_id


def _box(box: Any, where: str) -> dict[str, Any]:
    if not isinstance(box, Mapping):
        raise ValueError(f"{where} must be a dict with corners (8×3), label and color")
    corners = np.asarray(box.get("corners"), dtype=np.float64)
    if corners.shape != (8, 3) or not np.isfinite(corners).all():
        raise ValueError(f"{where}.corners must be 8 finite [x, y, z] points")
    out: dict[str, Any] = {"corners": corners.tolist()}
    if box.get("label") is not None:
        out["label"] = str(box["label"])
    color = box.get("color")
    if color is not None:
        rgb = [float(c) for c in color]
        if len(rgb) != 3 or not all(math.isfinite(c) and 0 <= c <= 255 for c in rgb):
            raise ValueError(f"{where}.color must be [r, g, b] in 0..255")
        out["color"] = rgb
    return out


def cloud_record(points: Any, boxes: Sequence[Any] | None = None, caption: str | None = None) -> dict[str, Any]:
    """An object3d record (without step) of a point array or W&B's {"type": "lidar/beta", "points", "boxes"}."""
    if isinstance(points, Mapping):
        if boxes is None:
            boxes = points.get("boxes")
        points = points.get("points")
    arr = to_numpy(points, "points").astype(np.float32)
    if arr.ndim != 2 or arr.shape[1] not in COLUMNS:
        raise ValueError(f"points must be N×3 (xyz), N×4 (xyz, category) or N×6 (xyz, rgb), not {arr.shape}")
    if not 1 <= len(arr) <= MAX_POINTS:
        raise ValueError(f"points must hold 1..{MAX_POINTS} points, not {len(arr)}")
    if not np.isfinite(arr).all():
        raise ValueError("points must be finite numbers")
    if boxes is not None and len(boxes) > MAX_BOXES:
        raise ValueError(f"at most {MAX_BOXES} boxes")
    rec: dict[str, Any] = {"points": {"shape": list(arr.shape),
                                      "data": base64.b64encode(arr.astype("<f4").tobytes()).decode("ascii")}}
    if boxes:
        rec["boxes"] = [_box(b, f"boxes[{i}]") for i, b in enumerate(boxes)]
    if caption is not None:
        rec["caption"] = str(caption)
    return rec


class PointCloudMethods:
    """Client.point_cloud: a 3D scatter pane, one cloud per step with a step slider."""

    env: str
    transport: Any

    def point_cloud(self, points: Any, win: str | None = None, env: str | None = None,
                    opts: Mapping[str, Any] | None = None, step: int = 0, boxes: Sequence[Any] | None = None) -> str:
        """Points N×3, N×4 (category) or N×6 (RGB 0–255), numpy or torch, or W&B's lidar dict; `boxes` as W&B's
        [{"corners": 8×3, "label", "color"}]. Drawn with Plotly's scatter3d; large clouds are thinned on read."""
        rec = cloud_record(points, boxes, (opts or {}).get("caption"))
        t = _now()
        rec["step"], rec["wall"] = int(step), t
        win = new_win_id() if win is None else win
        self.transport.put({"t": t, "op": "update", "env": self.env if env is None else env, "win": win,
                            "kind": "object3d", "mode": "append", "name": None,
                            "opts": {"title": (opts or {}).get("title") or win}, "records": [rec]})
        return win
