"""TensorBoard import: logs written by torch's real SummaryWriter, imported into a real server, compared with
what TensorBoard's own EventAccumulator reads from the same files; live --logdir watching and restarts."""

from __future__ import annotations

import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
from tensorboard.backend.event_processing import event_accumulator as ea  # noqa: E402
from tensorboard.compat.proto.graph_pb2 import GraphDef  # noqa: E402
from tensorboard.util import tensor_util  # noqa: E402
from torch.utils.tensorboard import SummaryWriter  # noqa: E402

from helpers.tb_import import blob, export, import_tb, q, steps  # noqa: E402

KEEP_ALL = {k: 0 for k in ea.DEFAULT_SIZE_GUIDANCE}


def accumulator(run_dir: Path) -> ea.EventAccumulator:
    acc = ea.EventAccumulator(str(run_dir), size_guidance=KEEP_ALL)
    acc.Reload()
    return acc


def write_all_kinds(run: Path) -> dict:
    """One of every add_* kind (what the tests compare against is read back by EventAccumulator)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rng = np.random.default_rng(0)
    w = SummaryWriter(log_dir=str(run))
    for i in range(40):
        w.add_scalar("loss", 1.0 / (i + 1), i)
        w.add_scalar("ns/float", 0.5 * i, i, new_style=True)
        w.add_scalar("ns/double", 0.1 * i + 1e-12, i, new_style=True, double_precision=True)
        w.add_scalars("grp", {"a": i, "b": -i}, i)
    for i in range(4):
        w.add_histogram("weights", rng.normal(i, 1, 500), i)
        w.add_image("img", rng.random((3, 8, 10)), i)
        w.add_text("note", f"**step** {i}", i)
        w.add_pr_curve("pr", rng.integers(0, 2, 60), rng.random(60), i, num_thresholds=11)
    w.add_images("grid", rng.random((4, 3, 6, 6)), 0)
    fig = plt.figure()
    plt.plot([1, 2, 3])
    w.add_figure("fig", fig, 0)
    w.add_audio("snd", np.sin(np.linspace(0, 100, 800)) * 0.5, 0, sample_rate=8000)
    w.add_embedding(rng.random((12, 5)), metadata=[f"p{k}" for k in range(12)],
                    label_img=torch.rand(12, 3, 4, 4), global_step=3, tag="feat")
    model = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.ReLU())
    w.add_graph(model, torch.zeros(1, 4))
    layout = {"losses": {"both": ["Multiline", ["loss", "ns/float"]]},
              "band": {"m": ["Margin", ["loss", "ns/float", "ns/double"]]}}
    w.add_custom_scalars(layout)
    verts = torch.tensor([[[0.0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]]])
    colors = torch.tensor([[[255, 0, 0], [0, 255, 0], [0, 0, 255], [9, 9, 9]]], dtype=torch.int)
    faces = torch.tensor([[[0, 1, 2], [0, 1, 3], [0, 2, 3], [1, 2, 3]]], dtype=torch.int)
    w.add_mesh("tet", vertices=verts, colors=colors, faces=faces, global_step=2)
    w.add_hparams({"lr": 0.01, "bs": 32, "opt": "adam", "aug": True}, {"hp/acc": 0.75}, run_name="hp")
    w.close()
    return {"layout": layout}


@pytest.mark.e2e  # runs `python -m paneboard.server` itself
def test_every_kind_matches_event_accumulator(tmp_path: Path, server_types) -> None:
    logdir = tmp_path / "logs"
    info = write_all_kinds(logdir / "exp1")
    db = tmp_path / "tb.db"
    out = import_tb(logdir, db)
    assert "imported" in out
    srv = server_types.InProcessServer(db=db).start()
    try:
        envs = {e["name"] for e in srv.get_json("/api/v1/envs")["envs"]}
        assert {"logs/exp1", "logs/exp1/grp_a", "logs/exp1/grp_b", "logs/exp1/hp"} <= envs
        run = logdir / "exp1"
        acc = accumulator(run)
        env = "logs/exp1"

        # simple_value scalars: every point, its step, float32 value and float64 wall time exactly
        got = export(srv, env, "loss")
        want = acc.Scalars("loss")
        assert got["x"] == [e.step for e in want]
        assert got["y"] == [e.value for e in want]
        assert got["wall"] == [e.wall_time for e in want]
        # new_style float and double scalars are tensors for EventAccumulator
        for tag in ("ns/float", "ns/double"):
            got = export(srv, env, tag)
            want = acc.Tensors(tag)
            assert got["x"] == [e.step for e in want]
            assert got["y"] == [float(tensor_util.make_ndarray(e.tensor_proto)) for e in want]
            assert got["wall"] == [e.wall_time for e in want]
        # add_scalars: one run (env) per key
        for key in ("a", "b"):
            sub = accumulator(run / f"grp_{key}")
            got = export(srv, f"{env}/grp_{key}", "grp")
            assert got["y"] == [e.value for e in sub.Scalars("grp")] and len(got["y"]) == 40

        # histograms: every step's statistics and buckets
        recs = steps(srv, env, "weights")
        want = acc.Histograms("weights")
        assert [r["step"] for r in recs] == [e.step for e in want]
        for r, e in zip(recs, want, strict=True):
            h = e.histogram_value
            assert r["wall"] == e.wall_time
            assert (r["min"], r["max"], r["num"], r["sum"], r["sum_squares"]) == (h.min, h.max, h.num, h.sum,
                                                                                 h.sum_squares)
            # the read API drops empty outer buckets (as TensorBoard's histogram route does)
            nz = np.flatnonzero(np.asarray(h.bucket))
            lo, hi = int(nz[0]), int(nz[-1]) + 1
            assert [b[2] for b in r["buckets"]] == list(h.bucket)[lo:hi]
            assert [b[1] for b in r["buckets"]][:-1] == list(h.bucket_limit)[lo:hi - 1]

        # images (PNG, add_figure and add_images grids included): the exact bytes
        for tag in ("img", "grid", "fig"):
            recs = steps(srv, env, tag)
            want = acc.Images(tag)
            assert [r["step"] for r in recs] == [e.step for e in want]
            assert [blob(srv, r["src"]) for r in recs] == [e.encoded_image_string for e in want]
        snd = steps(srv, env, "snd")
        assert [blob(srv, r["src"]) for r in snd] == [e.encoded_audio_string for e in acc.Audio("snd")]
        assert snd[0]["sample_rate"] == 8000

        # text: win is the tag without /text_summary, markdown rendered
        recs = steps(srv, env, "note")
        assert [r["step"] for r in recs] == [e.step for e in acc.Tensors("note/text_summary")]
        assert "<strong>step</strong> 3" in recs[-1]["html"]

        # PR curves: the six rows of every step
        recs = steps(srv, env, "pr")
        want = acc.Tensors("pr")
        assert len(recs) == len(want) == 4
        for r, e in zip(recs, want, strict=True):
            a = tensor_util.make_ndarray(e.tensor_proto)
            for row, key in enumerate(("tp", "fp", "tn", "fn", "precision", "recall")):
                assert r[key] == a[row].astype(np.float64).tolist()

        # the embedding: its shape, labels and distances of the stored matrix
        win = "projector/feat/00003"
        pane = srv.get_json(f"/api/v1/envs/{q(env)}/panes/{q(win)}")["data"]
        mat = np.loadtxt(run / "00003" / "feat" / "tensors.tsv", delimiter="\t", dtype=np.float32)
        assert (pane["n"], pane["d"], pane["has_sprite"]) == (12, 5, True)
        meta = srv.get_json(f"/api/v1/envs/{q(env)}/panes/{q(win)}/metadata")
        assert [row[0] for row in meta["rows"]] == [f"p{k}" for k in range(12)]
        nb = srv.get_json(f"/api/v1/envs/{q(env)}/panes/{q(win)}/neighbors?i=0&k=11&metric=euclidean")["neighbors"]
        dist = np.linalg.norm(mat - mat[0], axis=1)
        assert [n["i"] for n in nb] == list(np.argsort(dist[1:], kind="stable") + 1)
        np.testing.assert_allclose([n["distance"] for n in nb], np.sort(dist[1:]), rtol=1e-5)

        # the model graph
        graph = srv.get_json(f"/api/v1/envs/{q(env)}/panes/graph")
        assert graph["kind"] == "model_graph"
        assert len(graph["data"]["nodes"]) == len(GraphDef.FromString(acc.Graph().SerializeToString()).node)

        # mesh: one figure per (tag, step), the vertices and faces as written
        mesh = srv.get_json(f"/api/v1/envs/{q(env)}/panes/{q('mesh/tet/00002')}")["data"]["data"][0]
        assert mesh["type"] == "mesh3d" and mesh["x"] == [0, 1, 0, 0] and mesh["i"] == [0, 0, 0, 1]
        assert mesh["vertexcolor"][0] == "rgb(255,0,0)"

        # custom scalars layout and hparams (bool stays bool only where the proto says bool: torch writes 1.0)
        meta = srv.get_json(f"/api/v1/envs/{q(env)}/meta")["meta"]
        assert meta["custom_scalars"] == info["layout"]
        hp_meta = srv.get_json(f"/api/v1/envs/{q(env + '/hp')}/meta")["meta"]["hparams"]["."]
        assert hp_meta["hparams"] == {"lr": 0.01, "bs": 32.0, "opt": "adam", "aug": 1.0}
        assert hp_meta["metrics"] == {"hp/acc": 0.75}
    finally:
        srv.stop()

    # Re-running imports nothing new and duplicates nothing.
    assert "imported 0 TensorBoard events" in import_tb(logdir, db)
    srv = server_types.InProcessServer(db=db).start()
    try:
        assert len(export(srv, "logs/exp1", "loss")["x"]) == 40
        assert len(steps(srv, "logs/exp1", "weights")) == 4
    finally:
        srv.stop()


@pytest.mark.e2e  # runs `python -m paneboard.server` itself
def test_truncated_tail_and_corrupt_file(tmp_path: Path, server_types) -> None:
    """A half-written last record waits for its bytes; a corrupt file is a warning and the rest imports."""
    src = tmp_path / "src"
    with SummaryWriter(log_dir=str(src)) as w:
        for i in range(100):
            w.add_scalar("x", float(i), i)
    full = next(src.glob("*tfevents*")).read_bytes()
    run = tmp_path / "logs" / "run"
    run.mkdir(parents=True)
    part = run / "events.out.tfevents.1.host"
    cut = len(full) - 20  # in the middle of the last record
    part.write_bytes(full[:cut])
    bad = tmp_path / "logs" / "bad"
    bad.mkdir()
    (bad / "events.out.tfevents.2.host").write_bytes(b"\x10\x00\x00\x00\x00\x00\x00\x00garbage" * 5)
    db = tmp_path / "tb.db"
    out = import_tb(logdir := tmp_path / "logs", db, "--quiet")
    assert "corrupt record length" in out
    srv = server_types.InProcessServer(db=db).start()
    try:
        assert export(srv, "logs/run", "x")["x"] == list(range(99))
    finally:
        srv.stop()
    with open(part, "ab") as f:
        f.write(full[cut:])
    import_tb(logdir, db, "--quiet")
    srv = server_types.InProcessServer(db=db).start()
    try:
        assert export(srv, "logs/run", "x")["x"] == list(range(100))
    finally:
        srv.stop()


def wait_points(srv, env: str, win: str, n: int, timeout: float = 30.0) -> list[float]:
    deadline = time.monotonic() + timeout
    got: list[float] = []
    while time.monotonic() < deadline:
        try:
            got = export(srv, env, win)["x"]
        except urllib.error.HTTPError:
            got = []
        if len(got) >= n:
            return got
        time.sleep(0.2)
    raise AssertionError(f"{env}/{win}: {len(got)} of {n} points after {timeout}s\n{srv.log()[-3000:]}")


@pytest.mark.e2e  # starts a ServerProcess with --logdir
def test_logdir_watch_live_and_restart(tmp_path: Path, server_types) -> None:
    """--logdir imports at start, follows a run as it is written, and resumes after a restart without
    duplicates (a new writer's file in the same run included; its steps going back are kept)."""
    logdir = tmp_path / "runs"
    w = SummaryWriter(log_dir=str(logdir / "live"))
    for i in range(50):
        w.add_scalar("loss", float(i), i)
    w.flush()
    # --logdir and a restart on the same database: the CLI and the process are the point here.
    srv = server_types.ServerProcess(db=tmp_path / "pb.db", extra_args=["--logdir", str(logdir)]).start()
    try:
        assert wait_points(srv, "runs/live", "loss", 50) == list(range(50))
        for i in range(50, 120):
            w.add_scalar("loss", float(i), i)
            if i % 10 == 0:
                w.add_histogram("h", np.arange(i), i)
        w.flush()
        assert wait_points(srv, "runs/live", "loss", 120) == list(range(120))
        assert len(steps(srv, "runs/live", "h")) == 7
        srv.stop()
        for i in range(120, 150):  # written while the server is down
            w.add_scalar("loss", float(i), i)
        w.close()
        w2 = SummaryWriter(log_dir=str(logdir / "live"))  # a restarted training run: steps go back
        for i in range(100, 110):
            w2.add_scalar("loss", float(i), i)
        w2.close()
        srv.start()
        got = wait_points(srv, "runs/live", "loss", 160)
        srv.stop()   # a stop makes one last pass over the logdir before the process exits: it adds nothing twice
        srv.start()
        assert export(srv, "runs/live", "loss")["x"] == got == list(range(150)) + list(range(100, 110))
        assert len(steps(srv, "runs/live", "h")) == 7
    finally:
        srv.stop()
        w.close()


@pytest.mark.e2e  # runs `python -m paneboard.server` itself
def test_import_bar_and_env_naming(tmp_path: Path, server_types) -> None:
    """The run's env is its path relative to the logdir's parent; a logdir that is itself a run is named
    after its folder; the progress bar goes to stderr."""
    with SummaryWriter(log_dir=str(tmp_path / "solo")) as w:
        w.add_scalar("a", 1.0, 0)
    db = tmp_path / "tb.db"
    out = subprocess.run([sys.executable, "-m", "paneboard.server", "import-tb", str(tmp_path / "solo"), "--db",
                          str(db)], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and "[###" in out.stderr and "imported 2 TensorBoard events (1 scalar point, 0 step records" in out.stdout
    srv = server_types.InProcessServer(db=db).start()
    try:
        assert [e["name"] for e in srv.get_json("/api/v1/envs")["envs"]] == ["solo"]
        assert export(srv, "solo", "a")["y"] == [1.0]
    finally:
        srv.stop()
