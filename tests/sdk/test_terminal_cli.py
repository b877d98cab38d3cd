"""`paneboard runs`, `tail` and `status` against a real server: plain text a user can paste into a chat."""

from __future__ import annotations

import os
import subprocess
import sys
from typing import Any

import pytest

from paneboard.cli import main

TB = "Traceback (most recent call last):\n  File \"t.py\", line 1\nZeroDivisionError: division by zero"


def seed(server: Any) -> None:
    events = []
    for i, (lr, loss) in enumerate([(0.1, 0.5), (0.01, 0.25)]):
        env = f"mnist-{i}"
        events += [{"op": "run_start", "env": env, "client": f"c{i}", "t": 1000.0,
                    "provenance": {"host": "gpu1", "user": "ana", "pid": 42, "python": "3.11.7",
                                   "git": {"commit": "abcdef1234567890", "branch": "main", "dirty": True},
                                   "argv": ["train.py", f"--lr={lr}"]}},
                   {"op": "run_config", "env": env, "config": {"lr": lr, "batch": 64}},
                   {"op": "update", "env": env, "win": "loss", "kind": "line", "mode": "append", "name": None,
                    "opts": {"title": "loss"}, "traces": [{"x": [0.0, 1.0], "y": [1.0, loss]}]},
                   {"op": "console", "env": env, "lines": [[n, 1000.0 + n, "stdout", f"{env} line {n}"]
                                                           for n in range(1, 31)]}]
    events.append({"op": "run_end", "env": "mnist-0", "client": "c0", "status": "failed", "error": TB})
    assert server.http("POST", "/api/v1/events", {"events": events})["ok"]


def test_runs_lists_status_age_the_config_that_differs_and_latest_values(server: Any, capsys: Any,
                                                                         monkeypatch: pytest.MonkeyPatch):
    seed(server)
    monkeypatch.setenv("PANEBOARD_URL", server.url)
    assert main(["runs"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].split() == ["STATUS", "AGE", "RUN", "lr", "loss"]  # batch is the same everywhere: left out
    rows = sorted(line.split() for line in out[1:])
    assert [(r[0], r[2], r[3], r[4]) for r in rows] == [("failed", "mnist-0", "0.1", "0.5"),
                                                        ("running", "mnist-1", "0.01", "0.25")]
    assert main(["runs", "status:running", "--server", server.url]) == 0
    assert [line.split()[2] for line in capsys.readouterr().out.splitlines()[1:]] == ["mnist-1"]
    assert main(["runs", "lr <", "--server", server.url]) == 1
    assert "position" in capsys.readouterr().err


def test_status_names_the_run_its_provenance_latest_values_and_error(server: Any, capsys: Any):
    seed(server)
    assert main(["status", "mnist-0", "--server", server.url]) == 0
    out = capsys.readouterr().out
    assert out.startswith("mnist-0: failed after ")
    for part in ("host ana@gpu1 · pid 42 · python 3.11.7", "git abcdef123456 on main (dirty)",
                 "command train.py --lr=0.1", "config lr=0.1 batch=64", "latest loss=0.5 (step 1)",
                 "error ZeroDivisionError: division by zero", f"console {server.url}/console/mnist-0"):
        assert part in out, part
    assert main(["status", "nope", "--server", server.url]) == 1
    assert "not found" in capsys.readouterr().err


def test_tail_prints_the_last_lines_and_follows_until_the_run_ends(server: Any, capsys: Any):
    seed(server)
    assert main(["tail", "mnist-0", "-n", "3", "--no-follow", "--server", server.url]) == 0
    assert capsys.readouterr().out.splitlines() == [f"mnist-0 line {n}" for n in (28, 29, 30)]
    job = subprocess.Popen([sys.executable, "-m", "paneboard.cli", "tail", "mnist-1", "-n", "2"],
                           stdout=subprocess.PIPE, text=True, env={**os.environ, "PANEBOARD_URL": server.url})
    try:
        assert job.stdout is not None
        assert [job.stdout.readline().strip() for _ in range(2)] == ["mnist-1 line 29", "mnist-1 line 30"]
        server.http("POST", "/api/v1/events", {"events": [{"op": "console", "env": "mnist-1", "lines": [
            [31, 2000.0, "stdout", "epoch 2"], [32, 2000.0, "stderr", " 50%|#####", True]]}]})
        assert job.stdout.readline().strip() == "epoch 2"  # the open bar waits until it ends
        server.http("POST", "/api/v1/events", {"events": [
            {"op": "console", "env": "mnist-1", "lines": [[32, 2000.0, "stderr", "100%|##########"]]},
            {"op": "run_end", "env": "mnist-1", "client": "c1"}]})
        rest, _ = job.communicate(timeout=30)
        assert rest.splitlines() == ["100%|##########", "[run finished]"]
        assert job.returncode == 0
    finally:
        if job.poll() is None:
            job.kill()
            job.wait()
