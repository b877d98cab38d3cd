"""paneboard.SummaryWriter has every public name of torch's and tensorboardX's writers, and its file_writer takes
their real Summary/Event protos (stable-baselines3's hparams callback, Ultralytics' _get_file_writer())."""

from __future__ import annotations

import inspect
import json

import numpy as np
import pytest
import tensorboardX
import tensorboardX.summary as xs
import torch
from tensorboard.compat.proto import event_pb2
from torch.utils.tensorboard import SummaryWriter as TorchWriter
from torch.utils.tensorboard import summary as tbs

from helpers.tensorboard import exported, records, writer
from paneboard import SummaryWriter
from paneboard.tensorboard import convert as tc


def _public(obj: object) -> set[str]:
    return {n for n in set(dir(obj)) | set(vars(obj)) if not n.startswith("_")}


@pytest.mark.parametrize("peer", ["torch", "tensorboardX"])
def test_every_public_name_of_the_peer_writer_is_there_and_takes_its_keywords(server, tmp_path, peer) -> None:
    cls = TorchWriter if peer == "torch" else tensorboardX.SummaryWriter
    theirs = cls(str(tmp_path / peer))
    ours = writer(server, f"surface-{peer}")
    try:
        assert len(_public(theirs)) > 30  # the walk sees methods and instance attributes
        assert sorted(_public(theirs) - _public(ours)) == []
        assert sorted(_public(theirs.file_writer) - _public(ours.file_writer)) == []
        assert ours._get_file_writer() is ours.file_writer
        assert ours.all_writers == {ours.log_dir: ours.file_writer}
        # Each method takes every keyword the peer's takes (a library passing one must not die of TypeError).
        missing = []
        for name in sorted(_public(theirs)):
            theirs_fn, ours_fn = getattr(cls, name, None), getattr(type(ours), name, None)
            if not callable(theirs_fn) or isinstance(theirs_fn, type):
                continue
            params = inspect.signature(ours_fn).parameters
            if any(p.kind is p.VAR_KEYWORD for p in params.values()):
                continue
            missing += [f"{name}({p})" for p in inspect.signature(theirs_fn).parameters if p not in params
                        and inspect.signature(theirs_fn).parameters[p].kind is not inspect.Parameter.VAR_KEYWORD]
        assert missing == []
    finally:
        theirs.close()
        ours.close()


def test_hparams_summaries_through_file_writer_become_the_runs_hparams(server) -> None:
    # What stable-baselines3's documented HParamCallback makes its TensorBoardOutputFormat write.
    exp, ssi, sei = tbs.hparams({"algorithm": "A2C", "learning rate": 3e-4, "gamma": 0.99, "norm": True},
                                {"rollout/ep_len_mean": 0, "train/value_loss": 0.0},
                                hparam_domain_discrete={"algorithm": ["A2C", "PPO"]})
    with writer(server, "sb3-hp") as w:
        for s in (exp, ssi, sei):
            w.file_writer.add_summary(s)
        w.add_scalar("train/value_loss", 0.25, 100)
        assert w.flush(20)
    session = server.get_json("/api/v1/envs/sb3-hp/meta")["meta"]["hparams"]["."]
    assert session["hparams"] == {"algorithm": "A2C", "learning rate": 3e-4, "gamma": 0.99, "norm": True}
    assert session["domains"] == {"algorithm": ["A2C", "PPO"]}
    assert set(session["metrics"]) == {"rollout/ep_len_mean", "train/value_loss"}
    table = server.get_json("/api/v1/hparams")
    row = next(r for r in table["sessions"] if r["env"] == "sb3-hp")
    assert row["metrics"]["train/value_loss"] == 0.25  # read from the metric tag's line pane


def test_tensorboardx_hparams_protos_are_read_as_well(server) -> None:
    exp, ssi, sei = xs.hparams({"lr": 0.1, "opt": "adam"}, {"acc": 0.5})
    with writer(server, "tbx-hp") as w:
        for s in (exp, ssi, sei):
            w._get_file_writer().add_summary(s)
        assert w.flush(20)
    session = server.get_json("/api/v1/envs/tbx-hp/meta")["meta"]["hparams"]["."]
    assert session["hparams"] == {"lr": 0.1, "opt": "adam"}


def _summaries(mod) -> list:
    rng = np.random.default_rng(0)
    img = rng.random((3, 8, 8)).astype(np.float32)
    bins = tc.tensorflow_bins()  # both writers pass their default_bins for bins="tensorflow"
    return [mod.scalar("loss", 0.5), mod.image("img", img, dataformats="CHW"),
            mod.histogram("h", rng.normal(size=200), bins),
            mod.text("note", "**bold**")]


@pytest.mark.parametrize("peer", ["torch", "tensorboardX"])
def test_summary_protos_make_the_panes_the_writers_own_methods_make(server, peer) -> None:
    """The same data through add_* and through file_writer.add_summary(<peer's summary proto>): equal panes."""
    rng = np.random.default_rng(0)
    img, values = rng.random((3, 8, 8)).astype(np.float32), rng.normal(size=200)
    with writer(server, "direct") as w:
        w.add_scalar("loss", 0.5, 3, walltime=10.0)
        w.add_image("img", img, 3, walltime=10.0)
        w.add_histogram("h", values, 3, walltime=10.0)
        w.add_text("note", "**bold**", 3, walltime=10.0)
        assert w.flush(20)
    with writer(server, "protos") as w:
        for s in _summaries(tbs if peer == "torch" else xs):
            w.file_writer.add_summary(s, 3, 10.0)
        assert w.flush(20)
    assert exported(server, "protos", "loss") == exported(server, "direct", "loss")
    for win in ("img", "h", "note"):
        direct, protos = records(server, "direct", win), records(server, "protos", win)
        assert len(protos) == 1 and protos[0].keys() == direct[0].keys()
        assert protos[0]["step"] == 3
    hist_direct, hist_protos = records(server, "direct", "h")[0], records(server, "protos", "h")[0]
    assert hist_protos["buckets"] == hist_direct["buckets"]
    assert records(server, "protos", "note")[0]["html"] == records(server, "direct", "note")[0]["html"]
    assert "<strong>bold</strong>" in records(server, "protos", "note")[0]["html"]


def test_add_event_and_file_writer_add_graph_take_real_protos(server) -> None:
    model = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.ReLU())
    from torch.utils.tensorboard._pytorch_graph import graph

    with writer(server, "events") as w:
        ev = event_pb2.Event(step=5, wall_time=20.0, summary=tbs.scalar("acc", 0.9))
        w.file_writer.add_event(ev)
        w.file_writer.add_event(event_pb2.Event(file_version="brain.Event:2"))  # nothing to show, no error
        with w.use_metadata(global_step=6):
            w.file_writer.add_event(event_pb2.Event(summary=tbs.scalar("acc", 0.95)))
        w.file_writer.add_graph(graph(model, torch.zeros(1, 4)))
        w.add_tensor("t", torch.tensor(1.5), 1)
        w.add_onnx_graph("model.onnx")  # not shown: a warning, never an error
        assert w.flush(20)
    acc = exported(server, "events", "acc")["acc"]
    assert (acc["x"], acc["y"], acc["wall"][0]) == ([5, 6], [pytest.approx(0.9), pytest.approx(0.95)], 20.0)
    pane = server.get_json("/api/v1/envs/events/panes/graph")
    assert pane["kind"] == "model_graph"
    assert exported(server, "events", "t")["t"]["y"] == [1.5]


def test_tensorboardx_spellings_and_scalar_json_export(server, tmp_path) -> None:
    w = SummaryWriter(logdir="tbx-run", write_to_disk=True, server="http://127.0.0.1", port=server.port)
    assert (w.log_dir, w.logdir, w.kwargs) == ("tbx-run", "tbx-run", {"write_to_disk": True})
    w.add_scalar("a", 1.0, 0, display_name="A", summary_description="the a")
    w.add_scalars("main", {"x": 1.0, "y": 2.0}, 1, walltime=5.0)
    w.add_video("v", np.zeros((1, 3, 2, 8, 8), dtype=np.uint8), 0, dataformats="NCTHW")
    w.add_hparams({"lr": 0.1}, {"m": 1.0}, name="trial")
    path = tmp_path / "scalars.json"
    w.export_scalars_to_json(str(path))
    assert json.loads(path.read_text()) == {"tbx-run/main/x": [[5.0, 1, 1.0]], "tbx-run/main/y": [[5.0, 1, 2.0]]}
    with pytest.raises(ValueError):
        w.add_video("v", np.zeros((1, 3, 2, 8, 8)), 0, dataformats="NCTHX")
    assert w.flush(20)
    w.close()
    assert "trial" in server.get_json("/api/v1/envs/tbx-run/meta")["meta"]["hparams"]
    (video,) = records(server, "tbx-run", "v")
    assert video["step"] == 0
