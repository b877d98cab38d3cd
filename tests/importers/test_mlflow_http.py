"""`dash-server import http://...`: an MLflow tracking server (mlflow's own, on loopback) read over its REST API."""

from __future__ import annotations

import hashlib
import json
import math
import subprocess
import sys
import urllib.request

import numpy as np
import pytest

import paneboard
from paneboard.server.cli.main import main as dash_server

VALUES = [1.5, math.nan, math.inf, -math.inf, -0.0, 5e-324, 1 / 3]

# mlflow's tracking server app (what `mlflow server` runs) served by werkzeug on a free port, with artifacts
# proxied (mlflow-artifacts:/); it logs a run through its own REST API, prints READY and its URL, and serves until stdin closes.
SERVER_SCRIPT = """
import json, os, sys, threading
root = sys.argv[1]
os.environ.update({"MLFLOW_ALLOW_FILE_STORE": "true", "_MLFLOW_SERVER_FILE_STORE": "file://" + root + "/mlruns",
                   "_MLFLOW_SERVER_SERVE_ARTIFACTS": "true", "_MLFLOW_SERVER_ARTIFACT_DESTINATION": root + "/art",
                   "_MLFLOW_SERVER_ARTIFACT_ROOT": "mlflow-artifacts:/"})
from mlflow.server import app
from werkzeug.serving import make_server
srv = make_server("127.0.0.1", 0, app, threaded=True)
threading.Thread(target=srv.serve_forever, daemon=True).start()
url = f"http://127.0.0.1:{srv.server_port}"
from mlflow.tracking import MlflowClient
c = MlflowClient(tracking_uri=url)
r = c.create_run(c.create_experiment("exp"), run_name="a", tags={"team": "vision"}, start_time=1700000000000)
c.log_param(r.info.run_id, "lr", "0.001")
for i, v in enumerate(json.loads(sys.argv[2])):
    c.log_metric(r.info.run_id, "loss", v, step=i * 2, timestamp=1700000000000 + i)
open(root + "/notes.txt", "w").write("served notes")
c.log_artifact(r.info.run_id, root + "/notes.txt")
c.set_terminated(r.info.run_id, "FINISHED", end_time=1700000099000)
print("READY", url, flush=True)
sys.stdin.read()
"""


@pytest.fixture
def mlflow_server(tmp_path):
    proc = subprocess.Popen([sys.executable, "-c", SERVER_SCRIPT, str(tmp_path), json.dumps(VALUES)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        # mlflow prints its own lines ("View run ..."); ours comes once the run is logged (EOF: it died)
        line = next((line for line in proc.stdout if line.startswith("READY ")), "")
        assert line, "mlflow's tracking server did not start"
        yield line.split()[1]
    finally:
        proc.terminate()  # it holds no state the test needs (its store is in tmp_path)
        proc.wait(timeout=30)


def test_mlflow_tracking_server(mlflow_server, tmp_path, make_server, capsys):
    db = tmp_path / "imported.db"
    assert dash_server(["import", mlflow_server, "--db", str(db), "--quiet"]) == 0
    assert "imported 7 points of 1 mlflow run" in capsys.readouterr().out
    assert dash_server(["import", mlflow_server, "--db", str(db), "--quiet"]) == 0
    assert "imported 0 points" in capsys.readouterr().out

    from mlflow.tracking import MlflowClient  # the peer's own reader is the truth

    client = MlflowClient(tracking_uri=mlflow_server)
    run = client.search_runs([client.get_experiment_by_name("exp").experiment_id])[0]
    truth = client.get_metric_history(run.info.run_id, "loss")
    srv = make_server("imported")
    api = paneboard.Api(server=srv.url)
    h = api.history("exp/a", keys=["loss"])
    np.testing.assert_array_equal(h["loss"].to_numpy(), [m.value for m in truth])
    np.testing.assert_array_equal(h["step"].to_numpy(), [m.step for m in truth])
    row = api.runs().iloc[0]
    assert row["status"] == "finished" and row["config.lr"] == 0.001 and list(row["tags"]) == ["team=vision"]
    logged = srv.get_json("/api/v1/envs/exp%2Fa/artifacts")["logged"]
    assert [(a["name"], [f["path"] for f in a["files"]]) for a in logged] == [("exp/a/notes.txt", ["notes.txt"])]
    sha = logged[0]["files"][0]["sha256"]
    assert sha == hashlib.sha256(b"served notes").hexdigest()
    with urllib.request.urlopen(f"{srv.url}/api/v1/artifact-blobs/{sha}") as r:
        assert r.read() == b"served notes"
