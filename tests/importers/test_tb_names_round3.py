"""A live paneboard.SummaryWriter and `import-tb` of the same directory name the run alike (README, "Coming from
TensorBoard"): relative and absolute log dirs, the run folder or its parent as the logdir."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("tensorboard")
from torch.utils.tensorboard import SummaryWriter as TorchWriter  # noqa: E402

import paneboard  # noqa: E402


def import_names(cwd: Path, logdir: str, db: Path, server_types) -> set[str]:
    """`dash-server import-tb LOGDIR` run from `cwd`, as a user types it; the env names it stored."""
    out = subprocess.run([sys.executable, "-m", "paneboard.server", "import-tb", logdir, "--db", str(db), "--quiet"],
                         cwd=cwd, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    srv = server_types.InProcessServer(db=db).start()
    try:
        return {e["name"] for e in srv.get_json("/api/v1/envs")["envs"]}
    finally:
        srv.stop()


@pytest.mark.e2e  # runs `python -m paneboard.server import-tb` as a user types it
def test_live_and_imported_runs_of_one_directory_pair(server, server_types, tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    project = tmp_path / "project"
    project.mkdir()
    monkeypatch.chdir(project)
    mmengine_dir = str(project / "work_dirs" / "20260101_120000" / "vis_data")  # mmengine passes it absolute
    log_dirs = ["runs/exp1", "./runs/exp2/", mmengine_dir]
    for d in log_dirs:  # the same script, once with torch's writer (event files) ...
        with TorchWriter(d) as w:
            w.add_scalar("loss", 0.5, 0)
    live = set()
    for d in log_dirs:  # ... and once live
        with paneboard.SummaryWriter(d, server="http://127.0.0.1", port=server.port) as w:
            w.add_scalar("loss", 0.5, 0)
            assert w.flush(timeout=10)
            live.add(w.get_logdir())
    assert live == {e["name"] for e in server.get_json("/api/v1/envs")["envs"]}
    assert live == {"runs/exp1", "runs/exp2", "work_dirs/20260101_120000/vis_data"}
    # The logdir above the runs, the run folder itself, relative or absolute: the names of the live runs.
    imported = import_names(project, "runs", tmp_path / "a.db", server_types)
    imported |= import_names(project, mmengine_dir, tmp_path / "b.db", server_types)
    assert imported == live
    assert import_names(project, "runs/exp1", tmp_path / "c.db", server_types) == {"runs/exp1"}

def test_outside_the_working_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A server's --logdir elsewhere keeps short names; a live writer elsewhere keeps its whole path."""
    from paneboard.protocol import run_name

    elsewhere = tmp_path / "data" / "runs"
    (tmp_path / "cwd").mkdir()
    monkeypatch.chdir(tmp_path / "cwd")
    assert run_name(elsewhere / "exp1", elsewhere) == "runs/exp1"
    assert run_name(elsewhere / "exp1") == (elsewhere / "exp1").as_posix()
    assert run_name(".") == run_name(Path.cwd(), "..") == "cwd"
