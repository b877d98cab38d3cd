"""At interpreter exit the SDK waits while the server is storing (progress, not a fixed budget), so a short job
on a busy machine leaves its whole run; exit_timeout bounds only a wait without progress."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from typing import Any

JOB = """
import sys, paneboard
port, env, n = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
c = paneboard.Client(port=port, env=env, exit_timeout=float(sys.argv[4]))
for i in range(n):
    c.text(f"line {i}", win=f"t{i % 50}", append=True)
"""


def test_exit_waits_while_the_server_acknowledges(server: Any, tmp_path: Any):
    n = int(os.environ.get("NN", "20000"))
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-c", JOB, str(server.port), "slow_store", str(n), os.environ.get("XT", "3")], cwd=tmp_path,
                          capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PANEBOARD_SPOOL_DIR": str(tmp_path / "spool")})
    took = time.monotonic() - started
    assert done.returncode == 0, done.stderr
    assert "paneboard sync" not in done.stderr, done.stderr
    run = server.get_json("/api/v1/envs/slow_store/run")
    assert run["status"] == "finished", (run, took)
    last = server.get_json("/api/v1/envs/slow_store/panes/t49")["data"]["html"]
    assert last.endswith(f"line {n - 1}"), last[-200:]
