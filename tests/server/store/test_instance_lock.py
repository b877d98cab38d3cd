"""One dash-server per SQLite file: a second one on the same file refuses to start, until the first is gone."""

from __future__ import annotations

import signal
from pathlib import Path
from typing import Any

import pytest


def test_a_second_server_on_the_same_sqlite_file_refuses_to_start(tmp_path: Path, make_server_process: Any):
    db = tmp_path / "shared.db"
    first = make_server_process(db=db).start()
    second = make_server_process(db=db)
    try:
        with pytest.raises(RuntimeError, match="exited with 2"):
            second.start()
        assert f"another dash-server (pid {first.proc.pid}) is already serving" in second.log()
        assert first.get_json("/api/v1/envs") == {"envs": []}  # the first one is untouched
        # kill -9 leaves the lock file behind, but not the lock: the next server starts.
        first.stop(signal.SIGKILL)
        second.start()
        assert second.get_json("/api/v1/envs") == {"envs": []}
    finally:
        second.stop()
        first.stop()


def test_servers_on_different_files_run_side_by_side(tmp_path: Path, make_server_process: Any):
    a = make_server_process(db=tmp_path / "a.db").start()
    try:
        b = make_server_process(db=tmp_path / "b.db").start()
        b.stop()
    finally:
        a.stop()
