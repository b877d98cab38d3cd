"""MLflow runs' artifacts (logged with mlflow's own client) imported as paneboard artifact versions, byte for byte."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

from paneboard.server.cli.main import main as dash_server

MLFLOW_SCRIPT = """
import os, sys
import mlflow
out = sys.argv[2]
mlflow.set_tracking_uri(sys.argv[1])
mlflow.set_experiment("exp")
os.makedirs(out + "/model/sub", exist_ok=True)
open(out + "/model/MLmodel", "w").write("flavors: {}\\n")
open(out + "/model/sub/weights.bin", "wb").write(os.urandom(3 << 20))
open(out + "/notes.txt", "w").write("first notes")
open(out + "/empty.txt", "w").close()
with mlflow.start_run(run_name="r"):
    mlflow.log_metric("loss", 0.5, step=1)
    mlflow.log_artifact(out + "/notes.txt")
    mlflow.log_artifact(out + "/empty.txt", artifact_path="misc")
    mlflow.log_artifacts(out + "/model", artifact_path="model")
"""


@pytest.fixture(scope="module")
def mlflow_store(tmp_path_factory) -> Path:
    tmp = tmp_path_factory.mktemp("mlflow-artifacts")
    env = {**os.environ, "MLFLOW_ALLOW_FILE_STORE": "true"}
    subprocess.run([sys.executable, "-c", MLFLOW_SCRIPT, (tmp / "mlruns").as_uri(), str(tmp / "src")], env=env,
                   check=True, timeout=120, capture_output=True, cwd=tmp)
    return tmp


def _get(url: str, token: str | None = None) -> bytes:
    req = urllib.request.Request(url, headers={"Authorization": f"Bearer {token}"} if token else {})
    with urllib.request.urlopen(req) as r:
        return r.read()


def _check_imported(url: str, src: Path, token: str | None = None) -> None:
    listed = json.loads(_get(f"{url}/api/v1/envs/exp%2Fr/artifacts", token))["logged"]
    by_name = {a["name"]: a for a in listed}
    assert sorted(by_name) == ["exp/r/misc", "exp/r/model", "exp/r/notes.txt"]
    assert by_name["exp/r/model"]["type"] == "model" and by_name["exp/r/notes.txt"]["type"] == "artifact"
    truth = {"exp/r/model": {"MLmodel": src / "model/MLmodel", "sub/weights.bin": src / "model/sub/weights.bin"},
             "exp/r/notes.txt": {"notes.txt": src / "notes.txt"}, "exp/r/misc": {"empty.txt": src / "empty.txt"}}
    for name, files in truth.items():
        got = {f["path"]: f for f in by_name[name]["files"]}
        assert sorted(got) == sorted(files)
        for rel, path in files.items():
            data = path.read_bytes()
            assert got[rel]["sha256"] == hashlib.sha256(data).hexdigest() and got[rel]["size"] == len(data)
            assert _get(f"{url}/api/v1/artifact-blobs/{got[rel]['sha256']}", token) == data


def test_mlflow_artifacts_into_a_database(mlflow_store, tmp_path, make_server, capsys):
    db = tmp_path / "imported.db"
    argv = ["import", str(mlflow_store / "mlruns"), "--db", str(db), "--quiet"]
    assert dash_server(argv) == 0
    assert "3 artifact versions" in capsys.readouterr().out
    assert dash_server(argv) == 0
    assert "0 artifact versions" in capsys.readouterr().out  # a second import adds nothing
    _check_imported(make_server("imported").url, mlflow_store / "src")


def test_mlflow_artifacts_into_a_running_server(mlflow_store, make_server, capsys):
    srv = make_server(token="tok-artifacts")
    argv = ["import", str(mlflow_store / "mlruns"), "--server", srv.url, "--token", "tok-artifacts", "--quiet"]
    assert dash_server(argv) == 0
    assert "3 artifact versions" in capsys.readouterr().out
    assert dash_server(argv) == 0
    assert "0 artifact versions" in capsys.readouterr().out
    _check_imported(srv.url, mlflow_store / "src", "tok-artifacts")
