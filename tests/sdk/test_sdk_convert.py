"""Unit tests of paneboard.convert: numbers/arrays/tensors/PIL images → wire values."""

from __future__ import annotations

import base64
import io
import json
import math

import numpy as np
import pytest
import torch  # in the dev extra: the torch paths must run, never skip
from PIL import Image

from paneboard import convert
from paneboard.convert import dumps


def decode(wire: dict) -> np.ndarray:
    img = Image.open(io.BytesIO(base64.b64decode(wire["data"])))
    assert (img.width, img.height) == (wire["width"], wire["height"])
    return np.asarray(img)


# ------------------------------------------------------------------------------------------- numbers


def test_fast_floats_plain_python_numbers():
    assert convert.fast_floats([1, 2.5, True]) == [1.0, 2.5, 1.0]
    assert all(type(v) is float for v in convert.fast_floats([1, 2]))
    assert convert.fast_floats(3) == [3.0]
    assert convert.fast_floats(2.5) == [2.5]
    assert convert.fast_floats((1, 2)) == [1.0, 2.0]
    assert convert.fast_floats([7]) == [7.0]


def test_fast_floats_declines_everything_else():
    assert convert.fast_floats(["1.5"]) is None
    assert convert.fast_floats("1.5") is None
    assert convert.fast_floats([[1, 2]]) is None
    assert convert.fast_floats([np.float32(1)]) is None
    assert convert.fast_floats(np.array([1.0])) is None
    assert convert.fast_floats(list(range(10_000))) is None  # long lists take the numpy path


def test_as_float_array_numpy_and_nested_lists():
    a = convert.as_float_array(np.array([[1, 2], [3, 4]], dtype=np.int32))
    assert a.dtype == np.float64 and a.tolist() == [[1.0, 2.0], [3.0, 4.0]]
    b = convert.as_float_array([[1, 2.5], [3, 4]])
    assert b.shape == (2, 2) and b[0, 1] == 2.5
    assert convert.as_float_array(np.float32(0.5)).shape == ()
    assert convert.as_float_array([True, False]).tolist() == [1.0, 0.0]


def test_as_float_array_rejects_non_numeric():
    with pytest.raises(TypeError):
        convert.as_float_array(["1.5", "2"])  # numpy alone would parse these
    with pytest.raises(TypeError):
        convert.as_float_array("abc")
    with pytest.raises(TypeError):
        convert.as_float_array(None)
    with pytest.raises(TypeError):
        convert.as_float_array([1, "x"])
    with pytest.raises(TypeError):
        convert.as_float_array({"a": 1})
    with pytest.raises(ValueError):
        convert.as_float_array([[1, 2], [3]])  # ragged


def test_none_in_list_becomes_nan():
    a = convert.as_float_array([1.0, None, 3])
    assert a[0] == 1.0 and math.isnan(a[1]) and a[2] == 3.0


def test_nan_passes_through_as_float_nan():
    out = convert.float_list(convert.as_float_array([1.0, float("nan"), float("inf")]))
    assert type(out[1]) is float and math.isnan(out[1])
    assert out[2] == math.inf
    assert math.isnan(convert.fast_floats([float("nan")])[0])
    # On the wire NaN is null (orjson) or the NaN literal (json); the server reads both as NaN.
    wire = dumps({"y": out}).decode()
    parsed = json.loads(wire)["y"]
    assert parsed[0] == 1.0 and (parsed[1] is None or math.isnan(parsed[1]))


def test_torch_tensor_with_grad_and_bfloat16():
    t = torch.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True) * 2
    a = convert.as_float_array(t)
    assert a.dtype == np.float64 and a.tolist() == [[2.0, 4.0], [6.0, 8.0]]
    assert convert.is_torch(t) and not convert.is_torch(a)
    b = convert.as_float_array(torch.tensor([1.5, 2.5], dtype=torch.bfloat16))
    assert b.tolist() == [1.5, 2.5]
    # A list of 0-d tensors that require grad (e.g. [loss]) must not hit Tensor.__array__.
    loss = (torch.ones(3, requires_grad=True) * 0.25).sum()
    assert convert.as_float_array([loss]).tolist() == [0.75]
    assert convert.as_float_array(torch.arange(3)).tolist() == [0.0, 1.0, 2.0]


def test_dumps_handles_numpy_values_in_opts():
    out = json.loads(dumps({"opts": {"legend": np.array(["a", "b"]), "w": np.int64(3), "c": np.arange(2)}}))
    assert out == {"opts": {"legend": ["a", "b"], "w": 3, "c": [0, 1]}}


# ------------------------------------------------------------------------------------------- images


def test_chw_float_image_scaled_and_roundtrips_as_png():
    rng = np.random.default_rng(0)
    chw = rng.random((3, 5, 7))
    wire = convert.encode_image(convert.image_hwc(chw))
    assert wire["mime"] == "image/png" and (wire["width"], wire["height"]) == (7, 5)
    px = decode(wire)
    assert px.shape == (5, 7, 3)
    np.testing.assert_array_equal(px, np.rint(np.transpose(chw, (1, 2, 0)) * 255).astype(np.uint8))


def test_gray_hw_and_single_channel_chw():
    hw = np.arange(12, dtype=np.uint8).reshape(3, 4) * 20
    px = decode(convert.encode_image(convert.image_hwc(hw)))
    np.testing.assert_array_equal(px, hw)
    px1 = decode(convert.encode_image(convert.image_hwc(hw[None])))
    assert px1.ndim == 2  # one channel → gray PNG
    np.testing.assert_array_equal(px1, hw)


def test_hwc_when_first_dim_is_not_a_channel_count():
    hwc = np.zeros((6, 5, 3), dtype=np.uint8)
    hwc[..., 0] = 200
    out = convert.image_hwc(hwc)
    assert out.shape == (6, 5, 3) and (out[..., 0] == 200).all()
    # Visdom's rule wins when both readings are possible: 3×H×3 is C×H×W.
    assert convert.image_hwc(np.zeros((3, 8, 3))).shape == (8, 3, 3)


def test_image_value_scaling_and_clipping():
    # floats above 1 are not scaled but clipped; ints are never scaled
    assert convert.to_uint8(np.array([[-5.0, 300.0, 1.5]])).tolist() == [[0, 255, 2]]
    assert convert.to_uint8(np.array([[0, 1]], dtype=np.int64)).tolist() == [[0, 1]]
    assert convert.to_uint8(np.array([[0.0, 0.5, 1.0]])).tolist() == [[0, 128, 255]]
    assert convert.to_uint8(np.array([[np.nan, 1.0]])).tolist() == [[0, 255]]
    assert convert.to_uint8(np.array([[True, False]])).tolist() == [[255, 0]]


def test_rgba_and_torch_image():
    t = torch.rand(4, 3, 2, requires_grad=True)
    px = decode(convert.encode_image(convert.image_hwc(t)))
    assert px.shape == (3, 2, 4)
    np.testing.assert_array_equal(px, np.rint(t.detach().permute(1, 2, 0).numpy() * 255).astype(np.uint8))


def test_pil_image_input_roundtrip():
    src = Image.new("RGB", (4, 3), (10, 20, 30))
    src.putpixel((1, 2), (255, 0, 0))
    px = decode(convert.encode_image(convert.image_hwc(src)))
    assert px.shape == (3, 4, 3)
    assert px[2, 1].tolist() == [255, 0, 0] and px[0, 0].tolist() == [10, 20, 30]
    pal = src.convert("P")
    assert convert.image_hwc(pal).shape == (3, 4, 3)
    assert convert.image_hwc(Image.new("LA", (2, 2))).shape == (2, 2, 4)


def test_jpeg_when_quality_given():
    wire = convert.encode_image(convert.image_hwc(np.full((3, 8, 8), 0.5)), jpgquality=90)
    assert wire["mime"] == "image/jpeg"
    assert base64.b64decode(wire["data"])[:2] == b"\xff\xd8"
    assert abs(int(decode(wire)[0, 0, 0]) - 128) <= 3
    with pytest.raises(ValueError):
        convert.encode_image(np.zeros((2, 2), np.uint8), jpgquality=0)


@pytest.mark.parametrize("shape", [(2, 3, 4, 5), (5,), (2, 4, 5), (4, 0)])
def test_bad_image_shapes_raise(shape):
    with pytest.raises(ValueError):
        convert.image_hwc(np.zeros(shape))


def test_string_image_raises():
    with pytest.raises(TypeError):
        convert.image_hwc("not an image")


# --------------------------------------------------------------------------------------------- grids


@pytest.mark.parametrize(("b", "nrow", "pad"), [(10, 8, 2), (3, 8, 2), (16, 4, 1), (5, 2, 0), (1, 8, 3)])
def test_grid_size_follows_visdom_formula(b, nrow, pad):
    c, h, w = 3, 5, 7
    grid = convert.make_grid(np.zeros((b, c, h, w)), nrow=nrow, padding=pad)
    assert grid.shape == (c, math.ceil(b / nrow) * (h + 2 * pad), min(nrow, b) * (w + 2 * pad))
    assert grid.dtype == np.uint8


def test_grid_places_tiles_row_major_on_white():
    batch = np.zeros((5, 1, 2, 3), dtype=np.uint8)
    for k in range(5):
        batch[k] = 10 * (k + 1)
    grid = convert.make_grid(batch, nrow=2, padding=1)
    assert grid.shape == (1, 3 * 4, 2 * 5)
    for k in range(5):
        r, c = divmod(k, 2)
        tile = grid[0, r * 4 + 1:r * 4 + 3, c * 5 + 1:c * 5 + 4]
        assert (tile == 10 * (k + 1)).all()
    assert grid[0, 0, 0] == 255 and grid[0, 8:, 5:].min() == 255  # padding and the empty 6th cell


def test_grid_scales_float_batches_and_accepts_lists():
    grid = convert.make_grid([torch.ones(3, 2, 2) * 0.5, np.ones((3, 2, 2)) * 0.5], nrow=8, padding=0)
    assert grid.shape == (3, 2, 4) and (grid == 128).all()
    with pytest.raises(ValueError):
        convert.make_grid([np.zeros((3, 2, 2)), np.zeros((3, 4, 4))])
    with pytest.raises(ValueError):
        convert.make_grid(np.zeros((2, 2, 4, 4)))  # 2 channels
    with pytest.raises(ValueError):
        convert.make_grid(np.zeros((2, 3, 4, 4)), nrow=0)
