"""TensorBoard-compatible summaries beyond pixels and buckets: PR curves, projector sprites and metadata, meshes, hparams."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..convert import is_torch
from ..protocol import PR_FIELDS
from .convert import encode_png, make_np, tb_grid, to_uint8

# ------------------------------------------------------------------------------------------- PR curves


def compute_curve(labels: np.ndarray, predictions: np.ndarray, num_thresholds: int,
                  weights: Any = None) -> np.ndarray:
    """TensorBoard's pr_curve math: 6×T (tp, fp, tn, fn, precision, recall); bucket = floor(p·(T−1))."""
    minimum_count = 1e-7
    w = 1.0 if weights is None else make_np(weights, "weights")
    bucket = np.int32(np.floor(predictions * (num_thresholds - 1)))
    fl = labels.astype(np.float64)
    rng = (0, num_thresholds - 1)
    tp_b, _ = np.histogram(bucket, bins=num_thresholds, range=rng, weights=fl * w)
    fp_b, _ = np.histogram(bucket, bins=num_thresholds, range=rng, weights=(1.0 - fl) * w)
    tp = np.cumsum(tp_b[::-1])[::-1]
    fp = np.cumsum(fp_b[::-1])[::-1]
    tn = fp[0] - fp
    fn = tp[0] - tp
    precision = tp / np.maximum(minimum_count, tp + fp)
    recall = tp / np.maximum(minimum_count, tp + fn)
    return np.stack((tp, fp, tn, fn, precision, recall))


def pr_record(data: np.ndarray) -> dict[str, Any]:
    """pr_curve record fields from the 6×T array; thresholds i/(T−1) as TensorBoard's plugin shows them."""
    t = data.shape[1]
    keys = PR_FIELDS
    rec: dict[str, Any] = {k: data[i].astype(np.float64).tolist() for i, k in enumerate(keys)}
    rec["thresholds"] = [i / (t - 1) for i in range(t)] if t > 1 else [0.0]
    return rec


# --------------------------------------------------------------------------------------------- projector


def make_sprite(label_img: Any) -> tuple[str, list[int]]:
    """base64 PNG sprite (ceil(√N) cells per row and column, like torch) and single_image_dim [W, H].

    label_img is N×C×H×W (C = 1 or 3); floats are ×255 and integers kept (torch scales uint8 too).
    """
    a = make_np(label_img, "label_img")
    if a.ndim != 4:
        raise ValueError(f"label_img must be N×C×H×W, got shape {a.shape}")
    n, _, h, w = a.shape
    nrow = math.ceil(n ** 0.5)
    grid = tb_grid(a, ncols=nrow).transpose(1, 2, 0)
    # torch pads to a square of the grid's width; cells are H×W, so the square is nrow cells each way.
    canvas = np.zeros((nrow * h, nrow * w, 3), dtype=grid.dtype)
    canvas[:grid.shape[0], :grid.shape[1]] = grid
    return encode_png(to_uint8(canvas, np.float64)), [int(w), int(h)]


def metadata_table(metadata: Any, header: Any, n: int) -> dict[str, Any]:
    """{"header": [...], "rows": [[str, ...], ...]} of add_embedding's metadata (one column → "label")."""
    rows = list(metadata)
    if len(rows) != n:
        raise ValueError(f"metadata has {len(rows)} rows for {n} data points")
    if not header:
        return {"header": ["label"], "rows": [[str(x)] for x in rows]}
    header = [str(h) for h in header]
    table = [[str(e) for e in r] for r in rows]
    if any(len(r) != len(header) for r in table):
        raise ValueError(f"every metadata row needs {len(header)} columns (metadata_header)")
    return {"header": header, "rows": table}


# -------------------------------------------------------------------------------------------------- mesh


def mesh_figure(vertices: Any, colors: Any = None, faces: Any = None) -> dict[str, Any]:
    """Plotly figure of add_mesh input: one mesh3d (faces given) or scatter3d trace per batch item."""
    v = make_np(vertices, "vertices").astype(np.float64)
    if v.ndim == 2:
        v = v[None]
    if v.ndim != 3 or v.shape[2] != 3:
        raise ValueError(f"vertices must be B×N×3, got shape {v.shape}")
    f = c = None
    if faces is not None:
        f = make_np(faces, "faces")
        f = f[None] if f.ndim == 2 else f
        if f.ndim != 3 or f.shape[2] != 3 or f.shape[0] != v.shape[0]:
            raise ValueError(f"faces must be B×F×3 with B = {v.shape[0]}, got shape {f.shape}")
    if colors is not None:
        c = make_np(colors, "colors")
        c = c[None] if c.ndim == 2 else c
        if c.shape != v.shape:
            raise ValueError(f"colors must have the vertices' shape {v.shape}, got {c.shape}")
        c = c.clip(0, 255).astype(np.int64)
    data = []
    for b in range(v.shape[0]):
        xyz = {"x": v[b, :, 0].tolist(), "y": v[b, :, 1].tolist(), "z": v[b, :, 2].tolist()}
        rgb = None if c is None else [f"rgb({r},{g},{bl})" for r, g, bl in c[b].tolist()]
        if f is not None:
            tr = {"type": "mesh3d", **xyz, "i": f[b, :, 0].astype(np.int64).tolist(),
                  "j": f[b, :, 1].astype(np.int64).tolist(), "k": f[b, :, 2].astype(np.int64).tolist()}
            if rgb is not None:
                tr["vertexcolor"] = rgb
        else:
            tr = {"type": "scatter3d", "mode": "markers", **xyz, "marker": {"size": 2}}
            if rgb is not None:
                tr["marker"]["color"] = rgb
        data.append(tr)
    return {"data": data, "layout": {}}


# ----------------------------------------------------------------------------------------------- hparams


def hparam_value(key: str, v: Any) -> Any:
    """bool stays bool (torch stores 1.0), int/float → number, str → str, tensor/array → its first number."""
    if isinstance(v, (bool, np.bool_)):
        return bool(v)
    if isinstance(v, (int, float, np.integer, np.floating)):
        return v.item() if isinstance(v, np.generic) else v
    if isinstance(v, str):
        return v
    if is_torch(v) or isinstance(v, np.ndarray):
        a = make_np(v).reshape(-1)
        if a.size == 0:
            raise ValueError(f"hparam {key!r} is an empty tensor")
        return a[0].item()
    raise ValueError(f"hparam {key!r}: value should be one of int, float, str, bool, or torch.Tensor, "
                     f"got {type(v).__name__}")


def image_mime(data: bytes) -> str | None:
    """The type of an encoded image summary's bytes (PNG, GIF, JPEG, WebP), or None for anything else."""
    if data.startswith(b"\x89PNG"):
        return "image/png"
    if data.startswith(b"GIF8"):
        return "image/gif"
    if data.startswith(b"\xff\xd8"):
        return "image/jpeg"
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    return None
