"""W&B-style media objects (Image, Histogram, Audio, Video, Html, Table, Object3D) as stepped-pane records."""

from __future__ import annotations

import base64
import os
from collections.abc import Sequence
from typing import Any

import numpy as np

from .. import pixels
from ..convert import to_numpy
from ..overlays import overlay_fields
from ..point_clouds import cloud_record
from ..tensorboard import convert as tc


class Media:
    """A value for paneboard.log: `kind` is the pane kind it goes to, `record()` its record (without step)."""

    kind = "media"

    def record(self) -> dict[str, Any]:
        raise NotImplementedError


class Image(Media):
    """wandb.Image: an array/tensor (HWC, CHW or HW; floats in [0, 1] ×255, other float ranges min–max
    normalised with the original range kept), a PIL image or a path; `caption` shows under it; `boxes` and
    `masks` (W&B's box_data / mask_data layer dicts, `classes` naming their class ids) are drawn over it as data."""

    def __init__(self, data_or_path: Any, mode: str | None = None, caption: str | None = None,
                 grouping: int | None = None, classes: Any = None, boxes: Any = None, masks: Any = None,
                 file_type: str | None = None, normalize: bool = True) -> None:
        self.caption = None if caption is None else str(caption)
        self.value_range: list[float] | None = None
        self.overlays = overlay_fields(boxes, masks, classes)
        if isinstance(data_or_path, (str, os.PathLike)):
            with open(data_or_path, "rb") as f:
                raw = f.read()
            self.mime = "image/gif" if raw[:3] == b"GIF" else "image/jpeg" if raw[:2] == b"\xff\xd8" else "image/png"
            self.data = base64.b64encode(raw).decode("ascii")
            return
        if hasattr(data_or_path, "save") and hasattr(data_or_path, "mode"):  # a PIL image
            data_or_path = np.asarray(data_or_path.convert("RGBA" if data_or_path.mode == "RGBA" else "RGB"))
        hwc, self.value_range = pixels.to_display(to_numpy(data_or_path, "data_or_path"), normalize)
        self.mime, self.data = "image/png", tc.encode_png(hwc)

    def record(self) -> dict[str, Any]:
        rec: dict[str, Any] = {"type": "image", "data": self.data, "mime": self.mime}
        if self.caption is not None:
            rec["caption"] = self.caption
        if self.value_range is not None:
            rec["value_range"] = self.value_range
        rec.update(self.overlays)
        return rec


class Histogram(Media):
    """wandb.Histogram(sequence, num_bins=64) or wandb.Histogram(np_histogram=(counts, edges))."""

    kind = "histogram"

    def __init__(self, sequence: Any = None, np_histogram: Any = None, num_bins: int = 64) -> None:
        if np_histogram is not None:
            counts, edges = (np.asarray(a, dtype=np.float64).reshape(-1) for a in np_histogram)
            if len(edges) != len(counts) + 1:
                raise ValueError("np_histogram must be (counts, bin_edges) with one more edge than counts")
            values = None
        else:
            values = np.asarray(to_numpy(sequence, "sequence"), dtype=np.float64).reshape(-1)
            values = values[np.isfinite(values)]
            if not values.size:
                values = np.zeros(1)
            counts, edges = np.histogram(values, bins=max(1, min(int(num_bins), 512)))
            counts = counts.astype(np.float64)
        self.counts, self.edges, self.values = counts, edges, values

    def record(self) -> dict[str, Any]:
        c, e = self.counts, self.edges
        mids = (e[:-1] + e[1:]) / 2
        return {"min": float(e[0]), "max": float(e[-1]), "num": float(c.sum()), "sum": float((c * mids).sum()),
                "sum_squares": float((c * mids * mids).sum()), "limits": e[1:].tolist(), "counts": c.tolist()}


class Audio(Media):
    """wandb.Audio: mono samples in [-1, 1] with sample_rate, or a .wav file path."""

    def __init__(self, data_or_path: Any, sample_rate: int | None = None, caption: str | None = None) -> None:
        self.caption = caption
        if isinstance(data_or_path, (str, os.PathLike)):
            with open(data_or_path, "rb") as f:
                self.data, self.rate = base64.b64encode(f.read()).decode("ascii"), sample_rate
            return
        if sample_rate is None:
            raise ValueError("paneboard.Audio: sample_rate is required for raw audio data")
        self.data, self.rate = tc.encode_wav(data_or_path, int(sample_rate)), int(sample_rate)

    def record(self) -> dict[str, Any]:
        return {"type": "audio", "data": self.data, "mime": "audio/wav", "sample_rate": self.rate}


class Video(Media):
    """wandb.Video: frames (T, C, H, W) or (N, T, C, H, W), uint8 or floats in [0, 1], stored as an animated GIF."""

    def __init__(self, data_or_path: Any, caption: str | None = None, fps: int = 4, format: str | None = None) -> None:  # noqa: A002
        if isinstance(data_or_path, (str, os.PathLike)):
            raise ValueError("paneboard.Video: video files are not supported; pass the frames as an array")
        frames = to_numpy(data_or_path, "data_or_path")
        if frames.ndim == 4:
            frames = frames[None]
        self.caption, self.data = caption, tc.encode_gif(tc.video_frames(frames), fps)

    def record(self) -> dict[str, Any]:
        rec: dict[str, Any] = {"type": "image", "data": self.data, "mime": "image/gif"}
        if self.caption is not None:
            rec["caption"] = str(self.caption)
        return rec


class Html(Media):
    """wandb.Html: an HTML string (or a file), shown sanitised by the server."""

    def __init__(self, data: Any, inject: bool = True) -> None:
        if hasattr(data, "read"):
            data = data.read()
        elif isinstance(data, os.PathLike) or (isinstance(data, str) and data.endswith(".html")
                                                 and os.path.isfile(data)):
            with open(data, encoding="utf-8") as f:
                data = f.read()
        self.html = str(data)

    def record(self) -> dict[str, Any]:
        return {"type": "text", "text": self.html, "format": "html"}


class Table(Media):
    """wandb.Table(columns=[...], data=[[...], ...]) or Table(dataframe=df): a sortable table pane per step.

    Cells are numbers, strings, booleans or None; media cells (an Image ...) are stored as their record."""

    kind = "table"

    def __init__(self, columns: Sequence[str] | None = None, data: Sequence[Sequence[Any]] | None = None,
                 rows: Sequence[Sequence[Any]] | None = None, dataframe: Any = None, **_: Any) -> None:
        if dataframe is not None:
            columns, data = [str(c) for c in dataframe.columns], dataframe.values.tolist()
        rows_in = data if data is not None else rows if rows is not None else []
        self.columns = [str(c) for c in columns] if columns is not None else \
            [f"c{k}" for k in range(len(rows_in[0]))] if rows_in else []
        self.data: list[list[Any]] = []
        for row in rows_in:
            self.add_data(*row)

    def add_data(self, *values: Any) -> None:
        if len(values) != len(self.columns):
            raise ValueError(f"paneboard.Table: a row needs {len(self.columns)} values, got {len(values)}")
        self.data.append([_cell(v) for v in values])

    def add_column(self, name: str, data: Sequence[Any]) -> None:
        if self.data and len(data) != len(self.data):
            raise ValueError(f"paneboard.Table: column {name!r} needs {len(self.data)} values")
        self.columns.append(str(name))
        if not self.data:
            self.data = [[] for _ in data]
        for row, v in zip(self.data, data, strict=True):
            row.append(_cell(v))

    def get_column(self, name: str) -> list[Any]:
        k = self.columns.index(name)
        return [row[k] for row in self.data]

    def record(self) -> dict[str, Any]:
        return {"columns": list(self.columns), "rows": [list(r) for r in self.data]}

    def wire(self) -> dict[str, Any]:
        """The table pane's `table` (docs/WIRE.md): pictures as {"image": {mime, data, caption}}, other media
        as their type's name."""
        def cell(v: Any) -> Any:
            if isinstance(v, dict) and "media" in v:
                m = v["media"]
                if m.get("type") != "image":
                    return str(m.get("type"))
                return {"image": {k: m[k] for k in ("mime", "data", "caption") if k in m}}
            return v

        return {"columns": list(self.columns), "rows": [[cell(v) for v in row] for row in self.data]}


class Object3D(Media):
    """wandb.Object3D: an N×3 (xyz), N×4 (xyz + category) or N×6 (xyz + RGB 0–255) point cloud, or W&B's dict
    {"type": "lidar/beta", "points": ..., "boxes": [{"corners": 8×3, "label", "color"}]}; a 3D scatter per step."""

    kind = "object3d"

    def __init__(self, data_or_path: Any, caption: str | None = None, boxes: Any = None, **_: Any) -> None:
        if isinstance(data_or_path, (str, os.PathLike)):
            raise ValueError("paneboard.Object3D: files (.obj, .gltf, .pts.json) are not supported; pass the points")
        self._record = cloud_record(data_or_path, boxes, caption)

    @classmethod
    def from_point_cloud(cls, points: Any, boxes: Any = None, vectors: Any = None, point_cloud_type: str = "lidar/beta",
                         **_: Any) -> Object3D:
        """W&B's Object3D.from_point_cloud(points, boxes): the same cloud and boxes (vectors are not drawn)."""
        return cls({"type": point_cloud_type, "points": points, "boxes": boxes})

    def record(self) -> dict[str, Any]:
        return dict(self._record)


def _cell(v: Any) -> Any:
    if v is None or isinstance(v, (str, bool, int, float)):
        return v
    if isinstance(v, Media):
        return {"media": v.record()} if v.kind == "media" else str(type(v).__name__)
    item = getattr(v, "item", None)
    if callable(item) and getattr(v, "ndim", 1) == 0:
        return item()
    return str(v)
