"""`dash-server import --server URL`: peer data imported into a running server over HTTP, exactly and once."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import urllib.request

import numpy as np
import pytest

import paneboard
from paneboard.server.cli.main import main as dash_server

TOKEN = "import-s3cret"
VALUES = [1.5, math.nan, math.inf, -math.inf, -0.0, 5e-324, 1 / 3, 1e308]

MLFLOW_SCRIPT = """
import json, sys
from mlflow.entities import Metric
from mlflow.tracking import MlflowClient
c = MlflowClient(tracking_uri=sys.argv[1])
eid = c.create_experiment("exp")
r = c.create_run(eid, run_name="a", tags={"team": "vision"}, start_time=1700000000000)
c.log_param(r.info.run_id, "lr", "0.001")
values = json.loads(sys.argv[2])
for i, v in enumerate(values):
    c.log_metric(r.info.run_id, "loss", v, step=i * 2, timestamp=1700000000000 + i)
for k in range(0, 2500, 1000):  # mlflow takes at most 1000 metrics per batch
    c.log_batch(r.info.run_id, metrics=[Metric("lr_sched", 0.1 * 0.999 ** i, 1700000000000 + i, i)
                                        for i in range(k, min(k + 1000, 2500))])
c.set_terminated(r.info.run_id, "FINISHED", end_time=1700000099000)
"""


def _post_json(url: str, body: dict, token: str) -> dict:
    req = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST",
                                 headers={"Content-Type": "application/json", "Authorization": f"Bearer {token}"})
    with urllib.request.urlopen(req) as r:
        return json.loads(r.read())


@pytest.fixture(scope="module")
def mlflow_store(tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("mlflow")
    uri = (tmp_path / "mlruns").as_uri()
    env = {**os.environ, "MLFLOW_ALLOW_FILE_STORE": "true"}
    values = json.dumps(VALUES)  # Python's json writes NaN/Infinity, which it also reads back
    subprocess.run([sys.executable, "-c", MLFLOW_SCRIPT, uri, values], env=env, check=True, timeout=120,
                   capture_output=True)
    return tmp_path / "mlruns"


def test_mlflow_into_a_running_server_exactly_and_once(mlflow_store, make_server, capsys):
    srv = make_server(token=TOKEN)
    argv = ["import", str(mlflow_store), "--server", srv.url, "--token", TOKEN, "--quiet"]
    assert dash_server(argv) == 0
    assert "imported 2,508 points of 1 mlflow run" in capsys.readouterr().out.replace("2508", "2,508")
    assert dash_server(argv) == 0
    assert "imported 0 points" in capsys.readouterr().out  # the second import adds nothing

    api = paneboard.Api(server=srv.url, token=TOKEN)
    h = api.history("exp/a", keys=["loss"])
    got = h["loss"].to_numpy()
    np.testing.assert_array_equal(got, VALUES)  # NaN, ±inf, -0.0 and subnormals as float64
    assert math.copysign(1, got[4]) == -1
    np.testing.assert_array_equal(h["step"].to_numpy(), np.arange(len(VALUES)) * 2.0)
    np.testing.assert_array_equal(h["wall"].to_numpy(), 1700000000.0 + np.arange(len(VALUES)) / 1000)
    row = api.runs().iloc[0]
    assert row["status"] == "finished" and row["config.lr"] == 0.001 and list(row["tags"]) == ["team=vision"]
    assert len(api.history("exp/a", keys=["lr_sched"])) == 2500

    # What the importer asks: each importing client's stored count, and who holds an env
    record = json.loads(urllib.request.urlopen(urllib.request.Request(
        srv.url + "/api/v1/envs/exp%2Fa/run", headers={"Authorization": f"Bearer {TOKEN}"})).read())
    state = _post_json(srv.url + "/api/v1/import/state", {"clients": ["import-none"], "envs": ["exp/a", "nope"]},
                       TOKEN)
    assert state["clients"] == {"import-none": 0}
    assert state["envs"] == {"exp/a": {"exists": True, "import": record["provenance"]["import"]},
                             "nope": {"exists": False, "import": None}}


def test_server_import_needs_the_token_and_a_peer_source(tmp_path, make_server, capsys):
    srv = make_server(token=TOKEN)
    (tmp_path / "mlruns" / "0").mkdir(parents=True)
    (tmp_path / "mlruns" / "0" / "meta.yaml").write_text("name: Default")  # an MLflow store, by its shape
    assert dash_server(["import", str(tmp_path / "mlruns"), "--server", srv.url, "--quiet"]) == 2
    assert "HTTP 401" in capsys.readouterr().err
    assert paneboard.Api(server=srv.url, token=TOKEN).runs().empty
    (tmp_path / "env.json").write_text("{}")
    assert dash_server(["import", str(tmp_path / "env.json"), "--server", srv.url]) == 2
    assert "--server takes TensorBoard, W&B, MLflow and Neptune sources" in capsys.readouterr().err


def test_frames_endpoint_refuses_bad_input(make_server):
    srv = make_server()
    for path, body in (("/api/v1/import/frames?client=x", b"PBF1\x05\x00\x00\x00"),
                       ("/api/v1/import/frames?client=bad%20id", b""),
                       ("/api/v1/import/state", b'{"clients": [1]}')):
        req = urllib.request.Request(srv.url + path, data=body, method="POST")
        with pytest.raises(urllib.error.HTTPError) as err:
            urllib.request.urlopen(req)
        assert err.value.code == 400 and json.loads(err.value.read())["error"]


def test_a_resent_frame_stores_only_what_is_missing(make_server):
    from paneboard.server.peers.remote import HttpTarget

    srv = make_server(token=TOKEN)
    target = HttpTarget(srv.url, TOKEN)
    y = np.array(VALUES)

    def append(n: int) -> dict:  # the importer's event for the first n points of a series
        return {"op": "update", "mode": "append", "kind": "line", "env": "e", "win": "loss", "t": 1.0,
                "opts": {"title": "loss"}, "traces": [{"name": "loss", "x": np.arange(n, dtype=np.float64),
                                                       "y": y[:n], "wall": 1.7e9 + np.arange(n, dtype=np.float64)}]}

    assert target.write("import-resend", 5, [append(5)]) == [] and target.stored("import-resend") == 5
    assert target.write("import-resend", 8, [append(8)]) == []  # points 1..5 again, then 6..8: only these land
    assert target.write("import-resend", 8, [append(8)]) == []  # all of it again: nothing lands
    h = paneboard.Api(server=srv.url, token=TOKEN).history("e", keys=["loss"])
    np.testing.assert_array_equal(h["loss"].to_numpy(), y)
    np.testing.assert_array_equal(h["step"].to_numpy(), np.arange(8.0))
