"""paneboard.SummaryWriter media methods (images, figures, video, audio, text, PR curves, embeddings, graph, mesh)
against a real dash-server, checked against torch's own writer."""

from __future__ import annotations

import base64
import io
import wave
from pathlib import Path

import numpy as np
import pytest
import torch
from PIL import Image
from torch.utils.tensorboard import summary as tbs

from helpers.tensorboard import blob, pixels, q, records, torch_png, writer
from paneboard.tensorboard import summaries as ts


def test_images_match_torch_pixels(server) -> None:
    rng = np.random.default_rng(2)
    chw = rng.random((3, 20, 30)).astype(np.float32)
    nchw = rng.random((10, 1, 6, 5))
    cases = {  # tag: (our call, torch's image proto of the same input)
        "chw": (chw, "CHW", "add_image"),
        "hwc": (torch.from_numpy(chw.transpose(1, 2, 0).copy()), "HWC", "add_image"),
        "wch": (chw.transpose(2, 0, 1), "WCH", "add_image"),
        "hw": (chw[0], "HW", "add_image"),
        "gray": (chw[:1], "CHW", "add_image"),
        "rgba": (rng.random((4, 8, 9)), "CHW", "add_image"),
        "u8": ((chw * 255).astype(np.uint8), "CHW", "add_image"),
        "grid": (nchw, "NCHW", "add_images"),
        "grid_nhwc": (torch.from_numpy(nchw.transpose(0, 2, 3, 1).copy()), "NHWC", "add_images"),
    }
    with writer(server, "img") as w:
        for tag, (img, fmt, method) in cases.items():
            getattr(w, method)(tag, img, 5, dataformats=fmt)
        boxes = np.array([[2, 3, 15, 12], [10, 1, 28, 18]])
        w.add_image_with_boxes("boxes", chw, boxes, 6, labels=["cat", "dog"])
        w.add_image_with_boxes("boxes_scaled", chw, torch.from_numpy(boxes), 6, rescale=2, labels="one")
        with pytest.raises(ValueError):
            w.add_image("bad", chw, 0, dataformats="HWC")  # 3×20×30 read as HWC has 30 channels
        with pytest.raises(ValueError):
            w.add_images("bad", rng.random((2, 4, 5, 5)), 0)  # a grid takes 1 or 3 channels (torch asserts)
        with pytest.raises(ValueError):
            w.add_image("bad", chw, 0, dataformats="CCH")
        assert w.flush(20)
    for tag, (img, fmt, _) in cases.items():
        (rec,) = records(server, "img", tag)
        assert (rec["step"], rec["type"], rec["mime"]) == (5, "image", "image/png")
        ours = pixels(blob(server, rec["src"]))
        theirs = torch_png(tbs.image(tag, img, dataformats=fmt))
        assert ours.shape == theirs.shape and (ours == theirs).all(), tag
        assert (rec["width"], rec["height"]) == (ours.shape[1], ours.shape[0])
    assert pixels(blob(server, records(server, "img", "grid")[0]["src"])).shape == (12, 40, 3)  # 8 per row
    (rec,) = records(server, "img", "boxes")
    theirs = torch_png(tbs.image_boxes("b", chw, boxes, labels=["cat", "dog"]))
    assert (pixels(blob(server, rec["src"])) == theirs).all()
    (rec,) = records(server, "img", "boxes_scaled")  # labels dropped: one label for two boxes (as torch)
    theirs = torch_png(tbs.image_boxes("b", chw, boxes, rescale=2, labels=None))
    ours = pixels(blob(server, rec["src"]))
    assert ours.shape == (40, 60, 3) and (ours == theirs).all()


def test_integer_images_are_not_saturated(server) -> None:
    img = np.arange(3 * 4 * 5).reshape(3, 4, 5) * 4  # int64, 0..236
    with writer(server, "ints") as w:
        w.add_image("i64", img, 0)
        w.add_image("u8", img.astype(np.uint8), 0)
        w.add_image("bool", img > 100, 0)
        assert w.flush(20)
    i64 = pixels(blob(server, records(server, "ints", "i64")[0]["src"]))
    assert (i64 == img.transpose(1, 2, 0)).all()
    assert (i64 == pixels(blob(server, records(server, "ints", "u8")[0]["src"]))).all()
    assert len(np.unique(torch_png(tbs.image("t", img, dataformats="CHW")))) == 2  # torch's bug: ×255 saturates int images
    assert (pixels(blob(server, records(server, "ints", "bool")[0]["src"])) == (img > 100).transpose(1, 2, 0) * 255).all()


def test_figures_match_torch_rendering(server) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from torch.utils.tensorboard._utils import figure_to_image

    def fig(k: int):
        f = plt.figure(figsize=(2, 1.5), dpi=50)
        plt.plot([0, 1, 2], [k, 2 * k, k])
        return f

    with writer(server, "figs") as w:
        one = fig(1)
        w.add_figure("one", one, 3)
        assert not plt.fignum_exists(one.number)  # close=True
        kept = fig(2)
        w.add_figure("kept", kept, 3, close=False)
        assert plt.fignum_exists(kept.number)
        w.add_figure("list", [fig(1), fig(2), fig(3)], 4)
        assert w.flush(20)
    ours = pixels(blob(server, records(server, "figs", "one")[0]["src"]))
    assert (ours == figure_to_image(fig(1)).transpose(1, 2, 0)).all()
    grid = pixels(blob(server, records(server, "figs", "list")[0]["src"]))
    theirs = torch_png(tbs.image("l", figure_to_image([fig(1), fig(2), fig(3)]), dataformats="NCHW"))
    assert grid.shape == (75, 300, 3) and (grid == theirs).all()
    plt.close("all")


def test_video_is_an_animated_gif(server) -> None:
    colors = np.array([[255, 0, 0], [0, 255, 0], [0, 0, 255]], dtype=np.uint8)
    vid = np.zeros((3, 4, 3, 6, 8), dtype=np.uint8)  # 3 clips, 4 frames, RGB 6×8
    for b in range(3):
        for t in range(4):
            vid[b, t] = colors[(b + t) % 3][:, None, None]
    with writer(server, "video") as w:
        w.add_video("clip", vid, 2, fps=5)
        w.add_video("float", torch.from_numpy(vid.astype(np.float32) / 255), 2, fps=5)
        with pytest.raises(ValueError):
            w.add_video("bad", vid[0], 0)
        assert w.flush(20)
    for tag in ("clip", "float"):
        (rec,) = records(server, "video", tag)
        assert rec["mime"] == "image/gif"
        gif = Image.open(io.BytesIO(blob(server, rec["src"])))
        assert gif.n_frames == 4 and gif.size == (32, 6)  # 3 clips padded to 4, in one row (torch's grid)
        assert gif.info["duration"] == 200 and gif.info["loop"] == 0
        for t in range(4):
            gif.seek(t)
            frame = np.asarray(gif.convert("RGB"))
            for b in range(3):
                assert (frame[:, 8 * b:8 * b + 8] == colors[(b + t) % 3]).all(), (tag, t, b)
            assert (frame[:, 24:] == 0).all()  # the padding clip is black


def test_audio_matches_torch_wav_bytes(server) -> None:
    snd = np.sin(np.linspace(0, 200, 8000)) * 1.2  # beyond ±1: clipped, as torch does
    with writer(server, "audio") as w:
        with pytest.warns(UserWarning):
            w.add_audio("tone", torch.from_numpy(snd)[None], 1, sample_rate=16000)
        with pytest.raises(ValueError):
            w.add_audio("stereo", np.zeros((2, 100)), 1)
        assert w.flush(20)
    (rec,) = records(server, "audio", "tone")
    assert (rec["type"], rec["mime"], rec["sample_rate"]) == ("audio", "audio/wav", 16000)
    wav = blob(server, rec["src"])
    assert wav == tbs.audio("t", snd, sample_rate=16000).value[0].audio.encoded_audio_string
    with wave.open(io.BytesIO(wav)) as f:
        assert (f.getframerate(), f.getnchannels(), f.getsampwidth(), f.getnframes()) == (16000, 1, 2, 8000)


def test_text_is_markdown_in_pane_tag(server) -> None:
    with writer(server, "text") as w:
        w.add_text("notes", "**bold** and `code`", 0)
        w.add_text("notes", "second <script>alert(1)</script>", 1, walltime=123.0)
        with pytest.raises(TypeError):
            w.add_text("notes", 3, 2)
        assert w.flush(20)
    recs = records(server, "text", "notes")
    assert [r["step"] for r in recs] == [0, 1] and recs[1]["wall"] == 123.0
    assert "<strong>bold</strong>" in recs[0]["html"] and "<code>code</code>" in recs[0]["html"]
    assert "<script" not in recs[1]["html"]
    wins = [p["win"] for p in server.get_json("/api/v1/envs/text")["panes"]]
    assert wins == ["notes"]


# ---------------------------------------------------------------------------------------------- PR curves


def test_pr_curves_match_torch(server) -> None:
    rng = np.random.default_rng(3)
    labels = rng.integers(0, 2, 500)
    preds = np.clip(labels * 0.3 + rng.random(500) * 0.7, 0, 1)
    weights = rng.random(500)
    with writer(server, "pr") as w:
        w.add_pr_curve("plain", labels, preds, 0)
        w.add_pr_curve("weighted", torch.from_numpy(labels), torch.from_numpy(preds), 1, num_thresholds=11,
                       weights=weights)
        w.add_pr_curve("capped", labels, preds, 2, num_thresholds=500)
        w.add_pr_curve_raw("raw", [5, 3, 0], [4, 1, 0], [0, 3, 4], [0, 2, 5], [0.55, 0.75, 1.0], [1.0, 0.6, 0.0], 4)
        with pytest.raises(ValueError):
            w.add_pr_curve_raw("raw", [1, 2], [1], [1], [1], [1], [1], 0)
        assert w.flush(20)
    for tag, nt, wts in (("plain", 127, None), ("weighted", 11, weights), ("capped", 127, None)):
        (rec,) = records(server, "pr", tag)
        proto = tbs.pr_curve(tag, labels, preds, nt, wts).value[0].tensor
        theirs = np.array(proto.float_val, dtype=np.float32).reshape(6, -1)
        ours = np.array([rec[k] for k in ("tp", "fp", "tn", "fn", "precision", "recall")], dtype=np.float32)
        assert ours.shape == (6, nt) and (ours == theirs).all(), tag
        assert rec["thresholds"] == pytest.approx([i / (nt - 1) for i in range(nt)])
    (raw,) = records(server, "pr", "raw")
    assert (raw["step"], raw["tp"], raw["recall"]) == (4, [5, 3, 0], [1.0, 0.6, 0.0])


# -------------------------------------------------------------------------------------- projector, graph


def test_embeddings_from_two_writers_are_kept(server, tmp_path: Path) -> None:
    from torch.utils.tensorboard._embedding import make_sprite

    rng = np.random.default_rng(4)
    mat = rng.normal(size=(10, 5)).astype(np.float32)
    imgs = torch.rand(10, 3, 4, 4)
    with writer(server, "proj") as w:
        w.add_embedding(torch.from_numpy(mat), metadata=[f"p{i}" for i in range(10)], label_img=imgs, global_step=3)
        w.add_embedding(mat[:4], metadata=[[i, i % 2] for i in range(4)], metadata_header=["id", "odd"],
                        tag="cols/x")
        with pytest.raises(ValueError):
            w.add_embedding(mat, metadata=["too", "few"])
        with pytest.raises(ValueError):
            w.add_embedding(mat[0])
        assert w.flush(20)
    with writer(server, "proj") as w2:  # a second writer on the same env does not replace the first's
        w2.add_embedding(mat[:3], tag="other")
        assert w2.flush(20)
    wins = sorted(p["win"] for p in server.get_json("/api/v1/envs/proj")["panes"])
    assert wins == ["projector/cols/x/00000", "projector/default/00003", "projector/other/00000"]
    pane = server.get_json(f"/api/v1/envs/proj/panes/{q('projector/default/00003')}")
    assert pane["kind"] == "projector" and pane["title"] == "projector/default/00003"  # as the importer titles it
    # The sprite equals torch's sprite.png pixel for pixel (ceil(√10) = 4 cells per side).
    make_sprite(imgs, str(tmp_path))
    data, dim = ts.make_sprite(imgs)
    ours = pixels(base64.b64decode(data))
    assert dim == [4, 4] and ours.shape == (16, 16, 3)
    assert (ours == pixels((tmp_path / "sprite.png").read_bytes())).all()


def test_add_graph_traces_the_model(server) -> None:
    model = torch.nn.Sequential(torch.nn.Conv2d(1, 2, 3), torch.nn.ReLU(), torch.nn.Flatten(), torch.nn.Linear(8, 3))
    with writer(server, "graph") as w:
        w.add_graph(model, torch.rand(1, 1, 4, 4))
        assert w.flush(20)
    pane = server.get_json("/api/v1/envs/graph/panes/graph")
    assert pane["kind"] == "model_graph"
    ops = {n["op"] for n in pane["data"]["nodes"]}
    assert {"aten::_convolution", "aten::relu", "aten::linear"} <= ops or {"aten::conv2d", "aten::relu"} <= ops


# ------------------------------------------------------------------------------- hparams, layout, mesh


def test_mesh_is_a_plotly_figure(server) -> None:
    verts = torch.tensor([[[0.0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]]])
    faces = torch.tensor([[[0, 1, 2], [0, 1, 3]]], dtype=torch.int32)
    colors = torch.tensor([[[255, 0, 0], [0, 255, 0], [0, 0, 255], [9, 9, 9]]], dtype=torch.uint8)
    with writer(server, "mesh") as w:
        w.add_mesh("solid", verts, colors=colors, faces=faces, global_step=2)
        w.add_mesh("cloud", verts.numpy(), colors=colors.numpy(), config_dict={"camera": {"fov": 75}})
        with pytest.raises(ValueError):
            w.add_mesh("bad", np.zeros((1, 4, 2)))
        assert w.flush(20)
    (tr,) = server.get_json("/api/v1/envs/mesh/panes/solid")["data"]["data"]
    assert tr["type"] == "mesh3d" and (tr["i"], tr["j"], tr["k"]) == ([0, 0], [1, 1], [2, 3])
    assert tr["x"] == [0, 1, 0, 0] and tr["vertexcolor"][0] == "rgb(255,0,0)"
    cloud = server.get_json("/api/v1/envs/mesh/panes/cloud")
    assert cloud["data"]["data"][0]["type"] == "scatter3d" and cloud["opts"]["mesh_config"] == {"camera": {"fov": 75}}


# ------------------------------------------------------------------------------------------- lifecycle


