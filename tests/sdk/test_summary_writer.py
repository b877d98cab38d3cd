"""paneboard.SummaryWriter against a real dash-server, checked through the read API and against torch's own writer."""

from __future__ import annotations

import re
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest
import torch
from tensorboard import data_compat
from tensorboard.util import tensor_util
from torch.utils.tensorboard import summary as tbs

from helpers.tensorboard import exported, records, writer
from paneboard import Client, SummaryWriter
from paneboard.tensorboard import convert as tc

# --------------------------------------------------------------------------------------------- scalars


def test_add_scalar_values_steps_and_walls(server) -> None:
    with writer(server, "scalars") as w:
        w.add_scalar("loss", 0.5, 0)
        w.add_scalar("loss", 1, 1)                                   # int
        w.add_scalar("loss", np.float32(0.25), np.int64(2))           # numpy scalar and step
        w.add_scalar("loss", torch.tensor(0.125), torch.tensor(3))   # 0-d tensors
        w.add_scalar("loss", torch.tensor([2.0], requires_grad=True), 4, walltime=1000.0)
        w.add_scalar("loss", np.array([[3.0]]), None, new_style=True, double_precision=True)  # step None → 0
        w.add_scalar("loss", float("nan"), 6)
        t0 = time.time()
        w.add_scalar("other/acc", 0.1, 7)
        assert w.flush(20)
    tr = exported(server, "scalars", "loss")["loss"]
    assert tr["x"] == [0, 1, 2, 3, 4, 0, 6]
    assert tr["y"][:6] == [0.5, 1.0, 0.25, 0.125, 2.0, 3.0] and tr["y"][6] is None  # NaN is read back as null
    assert tr["wall"][4] == 1000.0
    acc = exported(server, "scalars", "other/acc")["other/acc"]
    assert acc["x"] == [7] and abs(acc["wall"][0] - t0) < 5
    pane = server.get_json("/api/v1/envs/scalars/panes/loss?walls=1")
    assert pane["kind"] == "line" and pane["title"] == "loss"


def test_add_scalar_rejects_bad_arguments_like_torch(server) -> None:
    w = writer(server, "bad")
    with pytest.raises(ValueError):
        w.add_scalar("x", np.ones(3), 0)
    with pytest.raises(ValueError):
        w.add_scalar("x", torch.ones(2), 0)
    with pytest.raises(TypeError):
        w.add_scalar("x", "1.5", 0)
    with pytest.raises(TypeError):
        w.add_scalar("x", None, 0)
    with pytest.raises(TypeError):
        w.add_scalar(3, 1.0, 0)
    with pytest.raises(ValueError):
        w.add_scalar("x", 1.0, "one")
    w.close()


def test_add_scalars_is_one_pane_with_a_trace_per_key(server) -> None:
    with writer(server, "multi") as w:
        w.add_scalars("run/loss", {"train": 1.0, "val": 2.0}, 0, walltime=50.0)
        w.add_scalars("run/loss", {"val": 1.5, "test": torch.tensor(9.0)}, 1)  # keys vary: pairing is by name
        w.add_scalars("run/loss", {"train": np.float64(0.5)}, 2)
        assert w.flush(20)
    traces = exported(server, "multi", "run/loss")
    assert set(traces) == {"train", "val", "test"}
    assert (traces["train"]["x"], traces["train"]["y"]) == ([0, 2], [1.0, 0.5])
    assert (traces["val"]["x"], traces["val"]["y"]) == ([0, 1], [2.0, 1.5])
    assert (traces["test"]["x"], traces["test"]["y"]) == ([1], [9.0])
    assert traces["train"]["wall"][0] == traces["val"]["wall"][0] == 50.0  # one walltime for the whole call
    envs = [e["name"] for e in server.get_json("/api/v1/envs")["envs"]]
    assert envs == ["multi"]  # no sub-runs


# ------------------------------------------------------------------------------------------ histograms


def test_histograms_match_torch_buckets(server, tmp_path: Path) -> None:
    torch_bins = torch.utils.tensorboard.SummaryWriter(str(tmp_path / "tb")).default_bins
    assert tc.tensorflow_bins().tolist() == torch_bins
    rng = np.random.default_rng(1)
    values = np.concatenate([rng.normal(0, 3, 5000), np.zeros(7), [1e-13, -2e5]])
    cases = [("tensorflow", None), ("auto", None), ("fd", None), (10, None), ([-20.0, -1.0, 0.0, 0.5, 20.0], None),
             ("tensorflow", 64), (100, 7)]
    with writer(server, "hist") as w:
        w.add_histogram_raw("raw", min=-1, max=3, num=6, sum=4, sum_squares=12, bucket_limits=[0.0, 1.0, 3.0],
                            bucket_counts=torch.tensor([1, 3, 2]), global_step=9)
        with pytest.raises(ValueError):
            w.add_histogram_raw("raw", 0, 1, 1, 1, 1, [1.0, 2.0], [1.0], 0)
        with pytest.raises(ValueError):
            w.add_histogram("empty", np.array([]), 0)
        w.add_histogram("wide", values, 0, bins="fd")  # ~600,000 bins: merged to fit the server's 20,000
        assert w.flush(20)
    (wide,) = records(server, "hist", "wide")
    assert 10_000 < len(wide["buckets"]) <= 20_000 and sum(b[2] for b in wide["buckets"]) == len(values)
    values = values[:-1]  # without the far outlier, for the comparisons with torch below
    with writer(server, "hist") as w:
        for step, (bins, max_bins) in enumerate(cases):
            w.add_histogram("h", torch.from_numpy(values), step, bins=bins, max_bins=max_bins, walltime=10.0 + step)
        w.add_histogram("h", values[:10], 3)  # a step going backwards is kept (purge_step deletes nothing)
        assert w.flush(20)
    recs = records(server, "hist", "h")
    assert [r["step"] for r in recs] == [0, 1, 2, 3, 4, 5, 6, 3]
    for r, (bins, max_bins) in zip(recs, cases, strict=False):
        value = tbs.histogram("h", values, torch_bins if bins == "tensorflow" else bins, max_bins).value[0]
        proto = value.histo
        # TensorBoard's own reading of torch's record ([left, right, count] float32, empty ends dropped).
        tb_view = tensor_util.make_ndarray(data_compat.migrate_value(value).tensor)
        assert (np.array(r["buckets"], dtype=np.float32) == tb_view).all(), (bins, max_bins)
        assert (r["min"], r["max"], r["num"]) == (proto.min, proto.max, proto.num)
        assert r["sum"] == pytest.approx(proto.sum) and r["sum_squares"] == pytest.approx(proto.sum_squares)
    assert recs[2]["wall"] == 12.0
    (raw,) = records(server, "hist", "raw")
    assert raw["buckets"] == [[-1.0, 0.0, 1.0], [0.0, 1.0, 3.0], [1.0, 3.0, 2.0]] and raw["num"] == 6


# -------------------------------------------------------------------------------------------------- media


def test_hparams_keep_types_and_log_metrics(server) -> None:
    with writer(server, "hp") as w:
        w.add_hparams({"lr": 0.1, "bs": 32, "bn": True, "opt": "adam", "skip": None, "t": torch.tensor([0.5, 1.0])},
                      {"hp/acc": 0.75, "hp/loss": torch.tensor(0.2)}, hparam_domain_discrete={"opt": ["adam", "sgd"]},
                      run_name="trial1", global_step=7)
        w.add_hparams({"lr": 0.01, "bn": False}, {"hp/acc": 0.8})
        with pytest.raises(TypeError):
            w.add_hparams({"lr": 0.1}, {"a": 1.0}, hparam_domain_discrete={"lr": [1, 2]})  # ints for a float
        with pytest.raises(TypeError):
            w.add_hparams([("lr", 0.1)], {"a": 1.0})
        with pytest.raises(ValueError):
            w.add_hparams({"lr": [0.1]}, {"a": 1.0})
        assert w.flush(20)
    sessions = server.get_json("/api/v1/envs/hp/meta")["meta"]["hparams"]
    assert sessions["trial1"]["hparams"] == {"lr": 0.1, "bs": 32, "bn": True, "opt": "adam", "t": 0.5}
    assert sessions["trial1"]["hparams"]["bn"] is True and sessions["."]["hparams"]["bn"] is False
    assert sessions["trial1"]["metrics"] == {"hp/acc": 0.75, "hp/loss": pytest.approx(0.2)}
    assert sessions["trial1"]["domains"] == {"opt": ["adam", "sgd"]}
    acc = exported(server, "hp", "hp/acc")
    assert (acc["trial1"]["x"], acc["trial1"]["y"]) == ([7], [0.75])
    assert (acc["."]["x"], acc["."]["y"]) == ([0], [0.8])


def test_custom_scalars_layout(server) -> None:
    layout = {"Losses": {"all": ["Multiline", ["loss/.*"]], "band": ["Margin", ["m", "lo", "hi"]]}}
    with writer(server, "cs") as w:
        w.add_custom_scalars(layout)
        with pytest.raises(ValueError):
            w.add_custom_scalars({"c": {"m": ["Margin", ["only", "two"]]}})
        with pytest.raises(ValueError):
            w.add_custom_scalars_marginchart(["a", "b"])
        assert w.flush(20)
    assert server.get_json("/api/v1/envs/cs/meta")["meta"]["custom_scalars"] == layout
    with writer(server, "cs") as w:
        w.add_custom_scalars_multilinechart(["acc"], category="Acc", title="accs")
        assert w.flush(20)
    assert server.get_json("/api/v1/envs/cs/meta")["meta"]["custom_scalars"] == {"Acc": {"accs": ["Multiline", ["acc"]]}}


def test_default_logdir_close_reopen_and_shared_client(server) -> None:
    w = SummaryWriter(comment="_lr0.1", server="http://127.0.0.1", port=server.port, purge_step=5)
    assert re.fullmatch(r"runs/[A-Z][a-z]{2}\d\d_\d\d-\d\d-\d\d_" + re.escape(socket.gethostname()) + "_lr0.1",
                        w.get_logdir())
    w.add_scalar("s", 1.0, 10)
    assert w.close()
    w.close()  # double close is fine
    w.add_scalar("s", 2.0, 5)  # after close: still logged (torch opens a new file); step 5 < 10 is kept
    assert w.close()
    assert exported(server, w.get_logdir(), "s")["s"]["x"] == [10, 5]

    client = Client(server="http://127.0.0.1", port=server.port)
    a, b = SummaryWriter(Path("exp/a"), client=client), SummaryWriter("exp/b/", client=client)
    assert b.get_logdir() == "exp/b"
    a.add_scalar("loss", 1.0, 0)
    b.add_scalar("loss", 2.0, 0)
    a.close()  # a borrowed client stays open for the other writer
    b.add_scalar("loss", 3.0, 1)
    assert b.flush(20)
    assert exported(server, "exp/a", "loss")["loss"]["y"] == [1.0]
    assert exported(server, "exp/b", "loss")["loss"]["y"] == [2.0, 3.0]
    client.close_connection()
    with pytest.raises(TypeError):
        SummaryWriter("x", client="http://127.0.0.1")


def test_unreachable_server_never_raises(tmp_path: Path) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again below: nothing listens there
    w = SummaryWriter("offline", server="http://127.0.0.1", port=port)
    for i in range(100):
        w.add_scalar("loss", 1.0 / (i + 1), i)
    w.add_histogram("h", np.arange(10), 0)
    assert w.flush(0.5) is False
    assert w.close(1.0) is False


def test_numpy_only_without_torch(server, tmp_path: Path) -> None:
    code = textwrap.dedent(f"""
        import sys
        sys.modules["torch"] = None  # any `import torch` now fails
        import numpy as np
        from paneboard import SummaryWriter
        w = SummaryWriter("np_only", server="http://127.0.0.1", port={server.port})
        w.add_scalar("loss", np.float32(0.5), 1)
        w.add_histogram("h", np.arange(100.0), 1)
        w.add_image("img", np.zeros((3, 4, 4)), 1)
        w.add_pr_curve("pr", np.array([0, 1, 1]), np.array([0.1, 0.8, 0.6]), 1)
        assert w.close(20)
    """)
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60, cwd=tmp_path)
    kinds = {p["win"]: p["kind"] for p in server.get_json("/api/v1/envs/np_only")["panes"]}
    assert kinds == {"loss": "line", "h": "histogram", "img": "media", "pr": "pr_curve"}
