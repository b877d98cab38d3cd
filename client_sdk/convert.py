"""Turn numpy arrays, torch tensors, PIL images and Python numbers into wire values (float lists, base64 images)."""

from __future__ import annotations

import base64
import io
import json
import math
import sys
from typing import Any

import numpy as np

try:
    import orjson

    _ORJSON_OPTS = orjson.OPT_SERIALIZE_NUMPY | orjson.OPT_NON_STR_KEYS
except ImportError:  # pragma: no cover - without orjson, encoding costs ~5 µs per call
    orjson = None


def _default(obj: Any) -> Any:
    """Encoder fallback for values users put in opts (numpy scalars/arrays, tensors, sets...)."""
    if hasattr(obj, "tolist"):
        return obj.tolist()
    if isinstance(obj, (set, frozenset, tuple)):
        return list(obj)
    return str(obj)


def dumps(obj: Any) -> bytes:
    """JSON bytes; orjson writes NaN/Infinity as null (the server reads null as NaN), json as literals."""
    if orjson is not None:
        try:
            return orjson.dumps(obj, default=_default, option=_ORJSON_OPTS)
        except TypeError:
            pass  # e.g. an int beyond 64 bits: the stdlib encoder copes
    return json.dumps(obj, default=_default, allow_nan=True, separators=(",", ":")).encode()


# Plain orjson (no options, no default hook) is ~0.4 µs faster per event; it raises TypeError on anything
# unusual (numpy values in opts, non-str keys...), and the caller then falls back to dumps().
fast_dumps = orjson.dumps if orjson is not None else dumps


# Python types that the hot path accepts without touching numpy (bool is an int subclass, so listed too).
_FAST_TYPES = (float, int, bool)
# Past this length numpy's tolist() beats a Python loop, so long lists take the array path.
_FAST_MAX_LEN = 256


def is_torch(x: Any) -> bool:
    """True for torch tensors, detected without importing torch (torch is optional)."""
    return type(x).__module__.startswith("torch") and hasattr(x, "detach")


def is_pil(x: Any) -> bool:
    """True for PIL images, detected without importing PIL.Image eagerly."""
    return type(x).__module__.startswith("PIL.") and hasattr(x, "mode") and hasattr(x, "size")


def torch_to_numpy(t: Any) -> np.ndarray:
    """Copy a tensor on any device (with or without grad) into a numpy array."""
    t = t.detach()
    if str(t.dtype) in ("torch.bfloat16", "torch.float8_e4m3fn", "torch.float8_e5m2", "torch.complex32"):
        # numpy has no such dtypes: widen on the tensor's device first.
        t = t.float()
    return t.cpu().numpy()


def fast_floats(v: Any) -> list[float] | None:
    """Float list for a Python number or a short flat list/tuple of Python numbers, else None.

    This is the hot path of line(X=[step], Y=[v]): no numpy, no copies beyond the result list.
    """
    tv = type(v)
    if tv is list or tv is tuple:
        if len(v) == 1:  # the common line(X=[step], Y=[value]) case, without a comprehension frame
            e = v[0]
            te = type(e)
            return [e] if te is float else [float(e)] if te is int or te is bool else None
        if len(v) > _FAST_MAX_LEN:
            return None
        for e in v:
            if type(e) not in _FAST_TYPES:
                return None
        return [float(e) for e in v]
    if tv is float:
        return [v]
    if tv is int or tv is bool:
        return [float(v)]
    return None


def _untorch(x: Any) -> Any:
    """Replace tensors inside (nested) lists so numpy never calls Tensor.__array__ (fails with grad/CUDA)."""
    if is_torch(x):
        return torch_to_numpy(x)
    if isinstance(x, (list, tuple)) and "torch" in sys.modules:
        return [_untorch(e) for e in x]
    return x


def to_numpy(x: Any, what: str = "value") -> np.ndarray:
    """numpy array for an array, tensor, number or nested list; TypeError for None, strings and mappings."""
    if isinstance(x, np.ndarray):
        return x
    if x is None:
        raise TypeError(f"{what} must be a number, a list of numbers, a numpy array or a torch tensor, not None")
    if is_torch(x):
        return torch_to_numpy(x)
    if isinstance(x, (str, bytes, dict, set)):
        raise TypeError(f"{what} must be numeric, got {type(x).__name__}")
    try:
        return np.asarray(_untorch(x))
    except ValueError as e:  # ragged nested lists
        raise ValueError(f"{what}: cannot make a rectangular array ({e})") from None


def as_float_array(x: Any, what: str = "value") -> np.ndarray:
    """float64 array; strings, dicts and other non-numeric input raise TypeError (numpy would parse '1.5')."""
    a = to_numpy(x, what)
    kind = a.dtype.kind
    if kind == "f":
        return a.astype(np.float64, copy=False)
    if kind in "biu":
        return a.astype(np.float64)
    if kind == "O":
        # Object arrays come from lists mixing numbers, None (→ NaN) and numpy scalars.
        flat = a.ravel()
        for e in flat:
            if e is not None and not isinstance(e, (int, float, np.number)):
                raise TypeError(f"{what} must be numeric, found {type(e).__name__} {e!r:.40}")
        out = np.array([np.nan if e is None else _to_float(e) for e in flat], dtype=np.float64)
        return out.reshape(a.shape)
    raise TypeError(f"{what} must be numeric, got an array of dtype {a.dtype}")


def _to_float(e: Any) -> float:
    try:
        return float(e)
    except OverflowError:  # an int beyond float64's range: the nearest float is infinite
        return math.inf if e > 0 else -math.inf


def float_list(a: np.ndarray) -> list[float]:
    """Wire form of a 1-D float array (NaN stays float('nan'); the encoder decides NaN vs null)."""
    return a.astype(np.float64, copy=False).tolist()


# ---------------------------------------------------------------------------------------------- images


def to_uint8(a: np.ndarray) -> np.ndarray:
    """Visdom's scaling: floats with max <= 1 are multiplied by 255; then clip to 0..255 and cast (NaN → 0)."""
    if a.dtype == np.uint8:
        return a
    if a.dtype.kind == "b":
        return a.astype(np.uint8) * 255
    if a.dtype.kind not in "fiu":
        raise TypeError(f"image values must be numeric, got dtype {a.dtype}")
    was_float = a.dtype.kind == "f"
    a = a.astype(np.float64)
    finite = a[np.isfinite(a)]
    if was_float and finite.size and finite.max() <= 1.0:
        a = a * 255.0
    a = np.nan_to_num(a, nan=0.0, posinf=255.0, neginf=0.0)
    return np.clip(np.rint(a), 0, 255).astype(np.uint8)


def image_hwc(img: Any) -> np.ndarray:
    """uint8 H×W (gray) or H×W×C (C = 3 or 4) array from an array/tensor/PIL image (Visdom's scaling).

    Layout rule for 3-D input: Visdom's C×H×W when the first dim is 1, 3 or 4; otherwise H×W×C when the last
    dim is 1, 3 or 4; anything else is rejected. (A 3×H×3 image is read as C×H×W.)
    """
    return to_uint8(_image_layout(img))


def image_display(img: Any) -> tuple[np.ndarray, list[float] | None]:
    """image_hwc's layout with the pixels people expect (pixels.scale: floats in [0, 1] ×255, other float ranges
    min–max normalised per image) and, when normalised, the [min, max] the values had."""
    from .pixels import scale

    return scale(_image_layout(img))


def _image_layout(img: Any) -> np.ndarray:
    if is_pil(img):
        if img.mode not in ("L", "RGB", "RGBA"):
            keep_alpha = "A" in img.mode or "transparency" in img.info
            img = img.convert("RGBA" if keep_alpha else "RGB")
        return np.asarray(img, dtype=np.uint8)
    a = to_numpy(img, "img")
    if a.ndim == 3:
        if a.shape[0] in (1, 3, 4):
            a = np.transpose(a, (1, 2, 0))
        elif a.shape[2] not in (1, 3, 4):
            raise ValueError(f"img must be C×H×W or H×W×C with 1, 3 or 4 channels, got shape {a.shape}")
        if a.shape[2] == 1:
            a = a[:, :, 0]
    elif a.ndim != 2:
        raise ValueError(f"img must be H×W, C×H×W or H×W×C, got shape {a.shape}")
    if a.shape[0] == 0 or a.shape[1] == 0:
        raise ValueError(f"img is empty (shape {a.shape})")
    return a


def encode_image(hwc: np.ndarray, jpgquality: float | None = None) -> dict[str, Any]:
    """Wire image dict {mime, data (base64), width, height}: PNG, or JPEG when jpgquality is given."""
    from PIL import Image  # Pillow is a dependency; imported lazily to keep `import paneboard` light

    pil = Image.fromarray(np.ascontiguousarray(hwc))
    buf = io.BytesIO()
    if jpgquality is not None:
        q = float(jpgquality)
        if not 0 < q <= 100:
            raise ValueError(f"opts.jpgquality must be in (0, 100], got {jpgquality!r}")
        if pil.mode == "RGBA":
            pil = pil.convert("RGB")  # JPEG has no alpha
        pil.save(buf, format="JPEG", quality=int(q))
        mime = "image/jpeg"
    else:
        pil.save(buf, format="PNG")
        mime = "image/png"
    return {"mime": mime, "data": base64.b64encode(buf.getvalue()).decode("ascii"),
            "width": int(hwc.shape[1]), "height": int(hwc.shape[0])}


def make_grid(batch: Any, nrow: int = 8, padding: int = 2) -> np.ndarray:
    """One uint8 C×H'×W' grid from B×C×H×W (array/tensor) or a list of C×H×W / H×W images.

    Size follows Visdom: C × ceil(B/nrow)·(H+2p) × min(nrow, B)·(W+2p), background white. Tiles sit at offset
    p inside their cell (centred; Visdom uses 1+p, which overflows the cell when p = 0).
    Scaling (float max <= 1 → ×255) is decided over the whole batch, like Visdom.
    """
    if int(nrow) < 1:
        raise ValueError(f"nrow must be >= 1, got {nrow!r}")
    if int(padding) < 0:
        raise ValueError(f"padding must be >= 0, got {padding!r}")
    nrow, padding = int(nrow), int(padding)
    if isinstance(batch, (list, tuple)):
        if not batch:
            raise ValueError("images: empty list")
        tiles = [to_numpy(t, "images[i]") for t in batch]
        tiles = [t[None] if t.ndim == 2 else t for t in tiles]
        if any(t.ndim != 3 for t in tiles) or len({t.shape for t in tiles}) != 1:
            raise ValueError(f"images: list items must all be C×H×W of one shape, got {[t.shape for t in tiles]}")
        a = np.stack(tiles)
    else:
        a = to_numpy(batch, "tensor")
    if a.ndim != 4:
        raise ValueError(f"images: tensor must be B×C×H×W, got shape {a.shape}")
    b, c, h, w = a.shape
    if b == 0 or h == 0 or w == 0:
        raise ValueError(f"images: empty batch (shape {a.shape})")
    if c not in (1, 3, 4):
        raise ValueError(f"images: need 1, 3 or 4 channels, got C={c}")
    a = to_uint8(a)
    cols = min(nrow, b)
    rows = math.ceil(b / cols)
    ch, cw = h + 2 * padding, w + 2 * padding
    grid = np.full((c, rows * ch, cols * cw), 255, dtype=np.uint8)
    for k in range(b):
        y0, x0 = (k // cols) * ch + padding, (k % cols) * cw + padding
        grid[:, y0:y0 + h, x0:x0 + w] = a[k]
    return grid
