"""TensorBoard-compatible conversions for paneboard.SummaryWriter: arrays, images, histograms, WAV, GIF."""

from __future__ import annotations

import base64
import io
import math
import warnings
from typing import Any

import numpy as np

from ..convert import is_torch, torch_to_numpy
from ..protocol import MAX_BUCKETS

# ------------------------------------------------------------------------------------------------ values


def make_np(x: Any, what: str = "value") -> np.ndarray:
    """numpy array from an array, a Python/numpy number, a torch tensor on any device, or a (nested) list.

    Like torch's make_np, a scalar becomes shape (1,) and a meta tensor (no data) becomes one random value.
    Unlike it, lists are accepted and bfloat16 widens to float32 (torch: float16, losing range).
    """
    if isinstance(x, np.ndarray):
        return x
    if x is None or isinstance(x, (str, bytes, dict, set)):
        raise TypeError(f"{what} must be a number, a numpy array or a torch tensor, got {type(x).__name__}")
    if isinstance(x, (int, float, np.generic)):
        return np.array([x])
    if is_torch(x):
        if x.device.type == "meta":
            return np.random.randn(1)
        return torch_to_numpy(x)
    try:
        return np.asarray([torch_to_numpy(e) if is_torch(e) else e for e in x] if isinstance(x, (list, tuple))
                          else x)
    except (ValueError, TypeError) as e:
        raise TypeError(f"{what}: cannot make a numeric array of {type(x).__name__} ({e})") from None


def scalar_value(x: Any, what: str = "scalar_value") -> float:
    """float of a one-element value (torch squeezes and asserts 0-d); NaN and inf pass through."""
    if is_torch(x):
        if x.numel() != 1:
            raise ValueError(f"{what} should contain one element, got shape {tuple(x.shape)}")
        return float(x.detach().reshape(()).item())
    a = make_np(x, what)
    if a.size != 1:
        raise ValueError(f"{what} should contain one element, got shape {a.shape}")
    if a.dtype.kind not in "biuf":
        raise TypeError(f"{what} must be numeric, got dtype {a.dtype}")
    return float(a.reshape(()))


def step_of(global_step: Any) -> int:
    """TensorBoard's step: int(global_step); None is step 0 (the Event proto default)."""
    return 0 if global_step is None else int(global_step)


# ------------------------------------------------------------------------------------------------ images


def convert_to_HWC(tensor: np.ndarray, input_format: str) -> np.ndarray:  # noqa: N802 - torch's name
    """torch's convert_to_HWC: any permutation of NCHW (grid of 8 columns), CHW (C=1 → RGB) or HW (→ RGB)."""
    if not isinstance(input_format, str):
        raise TypeError(f"dataformats must be a string, got {type(input_format).__name__}")
    fmt = input_format.upper()
    if len(set(fmt)) != len(fmt):
        raise ValueError(f"dataformats {input_format!r} uses a dimension letter twice")
    if tensor.ndim != len(fmt):
        raise ValueError(f"image of shape {tensor.shape} does not match dataformats {input_format!r}")
    want = {4: "NCHW", 3: "HWC", 2: "HW"}.get(len(fmt))
    if want is None or set(fmt) != set(want):
        raise ValueError(f"dataformats must be a permutation of NCHW, CHW or HW; got {input_format!r}")
    a = tensor.transpose([fmt.find(c) for c in want])
    if len(fmt) == 4:
        return tb_grid(a).transpose(1, 2, 0)
    if len(fmt) == 3:
        if a.shape[2] == 1:
            return np.concatenate([a, a, a], 2)
        if a.shape[2] not in (3, 4):
            raise ValueError(f"an image needs 1, 3 or 4 channels, got {a.shape[2]}")
        return a
    return np.stack([a, a, a], 2)


def tb_grid(images: np.ndarray, ncols: int = 8) -> np.ndarray:
    """torch's make_grid: N×{1,3}×H×W → 3×(rows·H)×(ncols·W), no padding, black background."""
    if images.ndim != 4:
        raise ValueError(f"images must be 4-D (N, C, H, W after dataformats), got shape {images.shape}")
    if images.shape[1] == 1:
        images = np.concatenate([images, images, images], 1)
    if images.shape[1] != 3:
        raise ValueError(f"a batch of images needs 1 or 3 channels, got {images.shape[1]}")
    n, _, h, w = images.shape
    if n == 0:
        raise ValueError("the batch of images is empty")
    ncols = min(n, ncols)
    nrows = math.ceil(n / ncols)
    canvas = np.zeros((3, h * nrows, w * ncols), dtype=images.dtype)
    for i in range(n):
        y, x = divmod(i, ncols)
        canvas[:, y * h:(y + 1) * h, x * w:(x + 1) * w] = images[i]
    return canvas


def to_uint8(a: np.ndarray, float_dtype: Any = np.float32) -> np.ndarray:
    """TensorBoard's scaling, fixed: floats (and bools) are in [0, 1] and ×255; integers are 0..255 as they are.

    torch multiplies every non-uint8 dtype by 255, so an int64 image of 0..255 saturates to 0/255.
    Floats are truncated after ×255 in `float_dtype` exactly as torch does (float32 for images).
    """
    if a.dtype == np.uint8:
        return a
    kind = a.dtype.kind
    if kind in "fb":
        return (a.astype(float_dtype) * 255).clip(0, 255).astype(np.uint8)
    if kind in "iu":
        return a.clip(0, 255).astype(np.uint8)
    raise TypeError(f"image values must be numeric, got dtype {a.dtype}")


def _draw_box(image: Any, box: np.ndarray, label: str | None) -> None:
    # torch's _draw_single_box: a red 2 px outline, the label on a red box above the bottom-left corner.
    from PIL import ImageDraw, ImageFont

    font = ImageFont.load_default()
    draw = ImageDraw.Draw(image)
    left, top, right, bottom = (box[0], box[1], box[2], box[3])
    draw.line([(left, top), (left, bottom), (right, bottom), (right, top), (left, top)], width=2, fill="Red")
    if label:
        x0, y0, x1, y1 = font.getbbox(label)
        tw, th = x1 - x0, y1 - y0
        margin = np.ceil(0.05 * th)
        draw.rectangle([(left, bottom - th - 2 * margin), (left + tw, bottom)], fill="Red")
        draw.text((left + margin, bottom - th - margin), label, fill="black", font=font)


def box_layer(boxes: np.ndarray, labels: list[str] | None, rescale: float = 1) -> dict[str, Any]:
    """add_image_with_boxes' N×4 (x1, y1, x2, y2) pixel boxes as a W&B-style overlay layer, a class per label."""
    names = [] if labels is None else list(dict.fromkeys(str(label) for label in labels))
    ids = {name: k for k, name in enumerate(names)}
    data = []
    for i in range(boxes.shape[0]):
        x0, y0, x1, y1 = (float(v) * rescale for v in boxes[i])
        box: dict[str, Any] = {"position": {"minX": min(x0, x1), "maxX": max(x0, x1), "minY": min(y0, y1),
                                            "maxY": max(y0, y1)}, "domain": "pixel", "class_id": 0}
        if labels is not None:
            box["class_id"], box["box_caption"] = ids[str(labels[i])], str(labels[i])
        data.append(box)
    class_labels = {str(k): name for name, k in ids.items()} if names else {"0": "box"}
    return {"boxes": {"box_data": data, "class_labels": class_labels}}


def encode_png(hwc: np.ndarray, rescale: float = 1, boxes: np.ndarray | None = None,
               labels: list[str] | None = None) -> str:
    """base64 PNG of a uint8 H×W×{3,4} image; boxes (N×4 x1,y1,x2,y2) drawn first, then the LANCZOS rescale."""
    from PIL import Image

    h, w = hwc.shape[:2]
    img = Image.fromarray(np.ascontiguousarray(hwc))
    if boxes is not None:
        for i in range(boxes.shape[0]):
            _draw_box(img, boxes[i], None if labels is None else labels[i])
    if rescale != 1:
        img = img.resize((int(w * rescale), int(h * rescale)), Image.Resampling.LANCZOS)
    buf = io.BytesIO()
    img.save(buf, format="PNG")
    return base64.b64encode(buf.getvalue()).decode("ascii")


def image_hwc(img: Any, dataformats: str) -> np.ndarray:
    """uint8 H×W×C of add_image/add_images input (any dtype, any device, any dataformats permutation)."""
    return to_uint8(convert_to_HWC(make_np(img, "img_tensor"), dataformats))


def figure_to_image(figures: Any, close: bool = True) -> np.ndarray:
    """Render matplotlib figure(s) with Agg: C×H×W uint8 for one figure, N×C×H×W for a list (torch's)."""
    import matplotlib.backends.backend_agg as agg
    import matplotlib.pyplot as plt

    def render(fig: Any) -> np.ndarray:
        canvas = agg.FigureCanvasAgg(fig)
        canvas.draw()
        w, h = fig.canvas.get_width_height()
        rgb = np.frombuffer(canvas.buffer_rgba(), dtype=np.uint8).reshape(h, w, 4)[:, :, :3]
        if close:
            plt.close(fig)
        return np.moveaxis(rgb, 2, 0)

    if isinstance(figures, list):
        return np.stack([render(f) for f in figures])
    return render(figures)


# ------------------------------------------------------------------------------------------ video, audio


def video_frames(vid: Any) -> np.ndarray:
    """T×H'×W'×3 uint8 frames from N×T×C×H×W: the batch padded to a power of two and tiled (torch's grid)."""
    v = make_np(vid, "vid_tensor")
    if v.ndim != 5:
        raise ValueError(f"vid_tensor must be (N, T, C, H, W), got shape {v.shape}")
    b, t, c, h, w = v.shape
    if c not in (1, 3):
        raise ValueError(f"a video needs 1 or 3 channels, got {c}")
    if b & (b - 1):
        v = np.concatenate([v, np.zeros((2 ** b.bit_length() - b, t, c, h, w), dtype=v.dtype)], axis=0)
    n_rows = 2 ** ((b.bit_length() - 1) // 2)
    n_cols = v.shape[0] // n_rows
    v = v.reshape(n_rows, n_cols, t, c, h, w).transpose(2, 0, 4, 1, 5, 3).reshape(t, n_rows * h, n_cols * w, c)
    v = to_uint8(v)
    return np.concatenate([v, v, v], 3) if c == 1 else v


def encode_gif(frames: np.ndarray, fps: float) -> str:
    """base64 animated GIF (looping) of T×H×W×3 uint8 frames, written by Pillow (no moviepy)."""
    from PIL import Image

    if fps <= 0:
        raise ValueError(f"fps must be > 0, got {fps!r}")
    images = [Image.fromarray(np.ascontiguousarray(f)) for f in frames]
    if not images:
        raise ValueError("the video has no frames")
    buf = io.BytesIO()
    images[0].save(buf, format="GIF", save_all=True, append_images=images[1:], duration=int(round(1000 / fps)),
                   loop=0)
    return base64.b64encode(buf.getvalue()).decode("ascii")


def encode_wav(snd: Any, sample_rate: int) -> str:
    """base64 mono 16-bit PCM WAV, as torch's audio(): squeezed to 1-D, |x| > 1 clipped with a warning."""
    import wave

    a = make_np(snd, "snd_tensor").squeeze()
    if a.ndim != 1:
        raise ValueError(f"snd_tensor must squeeze to 1 dimension (mono), got shape {a.shape}")
    if a.size and np.abs(a).max() > 1:
        warnings.warn("audio amplitude out of range, auto clipped", stacklevel=3)
        a = a.clip(-1, 1)
    pcm = (a * np.iinfo(np.int16).max).astype("<i2")
    buf = io.BytesIO()
    with wave.open(buf, "wb") as wav:
        wav.setnchannels(1)
        wav.setsampwidth(2)
        wav.setframerate(int(sample_rate))
        wav.writeframes(pcm.tobytes())
    return base64.b64encode(buf.getvalue()).decode("ascii")


# -------------------------------------------------------------------------------------------- histograms

_TF_BINS: np.ndarray | None = None


def tensorflow_bins() -> np.ndarray:
    """TensorBoard's default bucket edges: 0 and ±1e-12·1.1^k below 1e20 (1549 edges, computed like torch)."""
    global _TF_BINS
    if _TF_BINS is None:
        v, pos = 1e-12, []
        while v < 1e20:
            pos.append(v)
            v *= 1.1
        _TF_BINS = np.array([-x for x in reversed(pos)] + [0.0] + pos)
    return _TF_BINS


def _merge_bins(counts: np.ndarray, limits: np.ndarray, sub: int) -> tuple[np.ndarray, np.ndarray]:
    """Sum each run of `sub` adjacent bins (the last run padded with empty bins), as torch's max_bins does."""
    if len(counts) % sub:
        counts = np.pad(counts, [[0, sub - len(counts) % sub]], mode="constant", constant_values=0)
    counts = counts.reshape(-1, sub).sum(axis=-1)
    new_limits = np.empty(counts.size + 1, limits.dtype)
    new_limits[:-1] = limits[:-1:sub]
    new_limits[-1] = limits[-1]
    return counts, new_limits


def make_histogram(values: Any, bins: Any = "tensorflow", max_bins: int | None = None) -> dict[str, Any]:
    """TensorBoard's HistogramProto fields as a record: right edges `limits`, `counts`, empty ends trimmed.

    More than MAX_BUCKETS bins (e.g. bins="fd" with a far outlier) are merged into runs of adjacent bins until
    they fit, since the server refuses larger records; torch would write them.
    """
    v = make_np(values, "values").astype(float).reshape(-1)
    if v.size == 0:
        raise ValueError("The input has no element.")
    if isinstance(bins, str) and bins == "tensorflow":
        bins = tensorflow_bins()
    counts, limits = np.histogram(v, bins=bins)
    n = len(counts)
    if max_bins is not None and n > max_bins:
        counts, limits = _merge_bins(counts, limits, n // max_bins)  # torch's rule (may leave max_bins + 1)
    if len(counts) > MAX_BUCKETS - 1:  # room for the empty bucket kept on the left
        counts, limits = _merge_bins(counts, limits, math.ceil(len(counts) / (MAX_BUCKETS - 1)))
    # Keep the support plus one empty bucket on the left: TensorBoard stores only right edges.
    cum = np.cumsum(np.greater(counts, 0))
    start, end = np.searchsorted(cum, [0, cum[-1] - 1], side="right")
    start, end = int(start), int(end) + 1
    counts = counts[start - 1:end] if start > 0 else np.concatenate([[0], counts[:end]])
    limits = limits[start:end + 1]
    if counts.size == 0 or limits.size == 0:
        raise ValueError("The histogram is empty")
    return {"min": float(v.min()), "max": float(v.max()), "num": int(v.size), "sum": float(v.sum()),
            "sum_squares": float(np.einsum("i,i->", v, v)), "limits": limits.astype(np.float64).tolist(),
            "counts": counts.astype(np.float64).tolist()}
