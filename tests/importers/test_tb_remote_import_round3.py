"""`dash-server import LOGDIR --server URL` imports a TensorBoard logdir into a running server as a local import
does (same envs, points, steps; a re-run adds nothing), and without the tensorboard extra the command names it."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import urllib.parse
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("tensorboard")
from torch.utils.tensorboard import SummaryWriter  # noqa: E402

from paneboard.server.cli.main import main as dash_server  # noqa: E402


def q(name: str) -> str:
    return urllib.parse.quote(name, safe="")


def write_logdir(logdir: Path) -> None:
    """Two runs of torch's own writer: scalars (NaN and inf included), a histogram, an image, text, hparams."""
    rng = np.random.default_rng(3)
    for run in ("exp1", "exp2"):
        with SummaryWriter(str(logdir / run)) as w:
            for step in range(30):
                w.add_scalar("loss", float("nan") if step == 7 else float("inf") if step == 8 else 1.0 / (step + 1),
                             step)
            for step in range(3):
                w.add_histogram("weights", rng.normal(size=200), step)
                w.add_image("pred", rng.random((3, 4, 4)), step)
            w.add_text("note", f"run **{run}**", 0)
            w.add_hparams({"lr": 0.01, "opt": "adam"}, {"hp/acc": 0.75}, run_name="hp")


def contents(srv) -> dict:
    """Every env's panes, their exported points and their step records, through the API."""
    out: dict = {}
    for env in sorted(e["name"] for e in srv.get_json("/api/v1/envs")["envs"]):
        panes = {}
        for p in srv.get_json(f"/api/v1/envs/{q(env)}")["panes"]:
            base = f"/api/v1/envs/{q(env)}/panes/{q(p['win'])}"
            if p["kind"] == "line":
                panes[p["win"]] = [(t["x"], [repr(v) for v in t["y"]])
                                   for t in srv.get_json(base + "/export?format=json")["traces"]]
            else:
                recs = srv.get_json(base + "/steps?i0=0&i1=100")["records"]
                panes[p["win"]] = [(r["step"], r.get("data"), r.get("blob")) for r in recs]
        out[env] = (panes, srv.get_json(f"/api/v1/envs/{q(env)}/meta")["meta"])
    return out


def test_import_into_a_running_server_matches_a_local_import(tmp_path: Path, make_server, server_types,
                                                             capsys) -> None:
    logdir = tmp_path / "logs"
    write_logdir(logdir)
    local_db = tmp_path / "local.db"
    assert dash_server(["import", str(logdir), "--db", str(local_db), "--quiet"]) == 0
    remote = make_server("remote")
    capsys.readouterr()
    assert dash_server(["import", str(logdir), "--server", remote.url, "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "scalar point" in out and "(0 problems)" in out, out
    local = server_types.InProcessServer(db=local_db).start()  # the local import, read through the same API
    try:
        want = contents(local)
    finally:
        local.stop()
    assert set(want) == {"logs/exp1", "logs/exp2", "logs/exp1/hp", "logs/exp2/hp"}
    assert contents(remote) == want
    # Safe to re-run: nothing new is read, nothing is stored twice.
    assert dash_server(["import", str(logdir), "--server", remote.url, "--quiet"]) == 0
    assert "imported 0 TensorBoard events" in capsys.readouterr().out
    assert contents(remote) == want


def test_a_wrong_server_is_named_before_anything_is_read(tmp_path: Path, unused_port: int, capsys) -> None:
    write_logdir(tmp_path / "logs")
    assert dash_server(["import", str(tmp_path / "logs"), "--server", f"http://127.0.0.1:{unused_port}"]) == 2
    assert f"127.0.0.1:{unused_port}" in capsys.readouterr().err


# Run in a process of its own with `google` (protobuf, which TensorBoard's protos need) made unimportable, as on a
# machine without the tensorboard extra.
WITHOUT_GOOGLE = textwrap.dedent("""
    import importlib.abc, sys

    class NoGoogle(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name == "google" or name.startswith("google."):
                raise ModuleNotFoundError(f"No module named {name!r}", name=name)
            return None

    sys.meta_path.insert(0, NoGoogle())
    from paneboard.server.cli.main import main
    sys.exit(main(sys.argv[1:]))
""")


@pytest.mark.e2e  # runs the CLI in a process of its own (google blocked there only)
@pytest.mark.parametrize("command", [["import", "{logdir}", "--db", "{db}"], ["import-tb", "{logdir}", "--db", "{db}"],
                                     ["--logdir", "{logdir}", "--db", "{db}", "--port", "0"]])
def test_a_missing_tensorboard_extra_is_named_with_its_pip_line(tmp_path: Path, command: list[str]) -> None:
    logdir = tmp_path / "logs"
    write_logdir(logdir)
    argv = [a.format(logdir=logdir, db=tmp_path / "pb.db") for a in command]
    out = subprocess.run([sys.executable, "-c", WITHOUT_GOOGLE, *argv], capture_output=True, text=True, timeout=120)
    assert out.returncode == 2, out.stderr
    assert 'pip install "paneboard[tensorboard]"' in out.stderr and "Traceback" not in out.stderr, out.stderr
