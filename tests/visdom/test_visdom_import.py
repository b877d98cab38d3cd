"""dash-server import-visdom: env files saved by the real Visdom server become envs, and a re-run duplicates nothing."""

from __future__ import annotations

import json
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import numpy as np
import pytest
import visdom  # required: a missing client fails these tests

pytestmark = pytest.mark.e2e  # every test runs `python -m paneboard.server` itself


def visdom_saved_env(env_path: Path, port: int) -> Path:
    """Run the real Visdom server (no CDN downloads), fill env `exp` with the real client, save it, stop."""
    code = 'import sys; sys.argv[0] = "visdom"; from visdom.server.run_server import main; main()'
    proc = subprocess.Popen([sys.executable, "-c", code, "-port", str(port), "-env_path", str(env_path),
                             "-bind_local", "-logging_level", "WARNING"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(300):
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/env_state", data=b"{}", timeout=1).close()
                break
            except OSError:
                time.sleep(0.05)
        v = visdom.Visdom(server="http://127.0.0.1", port=port, env="exp", use_incoming_socket=False,
                          raise_exceptions=True)
        v.line(Y=np.array([[1.0, 10.0], [2.0, 20.0]]), X=np.array([0, 1]), win="loss",
               opts={"title": "loss", "legend": ["a", "b"]})
        v.line(Y=np.array([3.0]), X=np.array([2]), win="loss", update="append", name="a")
        v.text("hello", win="note")
        v.text("world", win="note", append=True)
        for shade in (0.0, 1.0):
            v.image(np.full((3, 4, 4), shade), win="imgs", opts={"store_history": True})
        v.heatmap(np.array([[1, 2], [3, 4]]), win="hm")
        assert json.loads(v.save(["exp"])) == ["exp"]
    finally:
        proc.terminate()
        proc.wait(15)
    saved = env_path / "exp.json"
    assert saved.exists()
    return saved


def run_import(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "paneboard.server", "import-visdom", *args],
                          capture_output=True, text=True, timeout=120)


def test_import_visdom_env_files_twice(tmp_path, server_types, unused_port):
    env_path = tmp_path / "visdom_env"
    env_path.mkdir()
    visdom_saved_env(env_path, unused_port)
    (env_path / "broken.json").write_text("{not json")
    db = tmp_path / "imported.db"
    for _ in range(2):  # the second run must leave exactly the same data
        out = run_import(str(env_path), "--db", str(db))
        assert out.returncode == 0, out.stderr
        # exp.json, Visdom's own empty main.json and the broken file
        assert "imported 4 windows from 3 env files (1 problem)" in out.stdout
        assert "broken.json" in out.stderr and "3/3" in out.stderr  # problem reported, progress shown
    srv = server_types.InProcessServer(db=db).start()
    try:
        envs = srv.get_json("/api/v1/envs")["envs"]
        assert [(e["name"], e["panes"]) for e in envs] == [("exp", 4)]
        loss = srv.get_json("/api/v1/envs/exp/panes/loss/export?format=json")
        assert {t["name"]: (t["x"], t["y"]) for t in loss["traces"]} == {"a": ([0, 1, 2], [1, 2, 3]),
                                                                        "b": ([0, 1], [10, 20])}
        assert srv.get_json("/api/v1/envs/exp/panes/note")["data"]["html"] == "hello<br>world"
        assert len(srv.get_json("/api/v1/envs/exp/panes/imgs")["data"]["history"]) == 2
        assert srv.get_json("/api/v1/envs/exp/panes/hm")["data"]["data"][0]["z"] == [[1, 2], [3, 4]]
    finally:
        srv.stop()
    assert run_import(str(tmp_path / "missing"), "--db", str(db)).returncode == 2
