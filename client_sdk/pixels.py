"""Pixels as people expect them: floats in [0, 1] ×255, other float ranges min–max normalised (range kept)."""

from __future__ import annotations

import numpy as np


def scale(a: np.ndarray) -> tuple[np.ndarray, list[float] | None]:
    """uint8 pixels of `a` and, when they were min–max normalised, the original [min, max].

    Floats within [0, 1] are ×255 (TensorBoard, Visdom) and floats within [0, 255] are kept (Visdom's
    float images); any other float range (an ImageNet-normalised tensor has negatives) is stretched to
    0..255 per image, since clipping it would store a nearly black picture. Integers are clipped to 0..255.
    """
    if a.dtype == np.uint8:
        return a, None
    if a.dtype.kind == "b":
        return a.astype(np.uint8) * 255, None
    if a.dtype.kind not in "fiu":
        raise TypeError(f"image values must be numeric, got dtype {a.dtype}")
    f = a.astype(np.float64)
    finite = f[np.isfinite(f)]
    lo, hi = (float(finite.min()), float(finite.max())) if finite.size else (0.0, 0.0)
    kept: list[float] | None = None
    if a.dtype.kind == "f":
        if lo >= 0 and hi <= 1:
            f = f * 255.0
        elif lo < 0 or hi > 255:
            f = (f - lo) * (255.0 / (hi - lo)) if hi > lo else np.zeros_like(f)
            kept = [lo, hi]
    f = np.nan_to_num(f, nan=0.0, posinf=255.0, neginf=0.0)
    return np.clip(np.rint(f), 0, 255).astype(np.uint8), kept


def to_display(a: np.ndarray, normalize: bool = True) -> tuple[np.ndarray, list[float] | None]:
    """uint8 H×W×C (C = 1, 3 or 4 → gray as 3 channels) of an HW, CHW or HWC array, and its kept range."""
    if a.ndim == 3 and a.shape[0] in (1, 3, 4) and a.shape[2] not in (1, 3, 4):
        a = np.transpose(a, (1, 2, 0))
    if a.ndim == 3 and a.shape[2] == 1:
        a = a[:, :, 0]
    if a.ndim not in (2, 3) or (a.ndim == 3 and a.shape[2] not in (3, 4)) or 0 in a.shape:
        raise ValueError(f"an image must be H×W, C×H×W or H×W×C with 1, 3 or 4 channels, got shape {a.shape}")
    px, kept = scale(a) if normalize else (np.clip(a, 0, 255).astype(np.uint8), None)
    if px.ndim == 2:
        px = np.repeat(px[:, :, None], 3, axis=2)
    return px, kept
