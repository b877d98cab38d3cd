"""3D point clouds through the real SDK and server: paneboard.Object3D (N×3, N×4, N×6, W&B's lidar dict with boxes)
and Client.point_cloud, stored as float32 bytes, read back exactly or thinned to a budget; bad input refused."""

from __future__ import annotations

import base64
import urllib.error
import urllib.parse

import numpy as np
import pytest

import paneboard
from helpers.tensorboard import records

BOX = {"corners": [[0, 0, 0], [0, 1, 0], [0, 0, 1], [1, 0, 0], [1, 1, 0], [0, 1, 1], [1, 0, 1], [1, 1, 1]],
       "label": "car", "color": [255, 0, 0]}


def _points(server, env: str, win: str, query: str = "") -> tuple[dict, np.ndarray]:
    got = server.get_json(f"/api/v1/envs/{urllib.parse.quote(env, safe='')}/panes/{win}/points?{query}")
    return got, np.frombuffer(base64.b64decode(got["points"]), "<f4").reshape(got["shown"], got["cols"])


def test_object3d_formats_are_stored_as_float32_and_read_back_exactly(online, tmp_path) -> None:
    rng = np.random.default_rng(0)
    xyz = rng.normal(size=(500, 3)).astype(np.float32)
    rgb = np.hstack([xyz, rng.integers(0, 256, (500, 3))]).astype(np.float32)
    cat = np.hstack([xyz, rng.integers(0, 5, (500, 1))]).astype(np.float32)
    run = paneboard.init(project="clouds", name="fmt", dir=tmp_path)
    paneboard.log({"xyz": paneboard.Object3D(xyz), "rgb": paneboard.Object3D(rgb, caption="coloured"),
                   "cat": paneboard.Object3D(cat),
                   "lidar": paneboard.Object3D({"type": "lidar/beta", "points": xyz, "boxes": [BOX]})})
    paneboard.log({"xyz": paneboard.Object3D.from_point_cloud(xyz[:10], boxes=[BOX])})
    paneboard.finish()
    assert run.rejected == 0
    for win, want in (("xyz", xyz), ("rgb", rgb), ("cat", cat), ("lidar", xyz)):
        got, arr = _points(online, "clouds/fmt", win, "i=0")
        assert (got["n"], got["cols"], got["shown"]) == (500, want.shape[1], 500)
        np.testing.assert_array_equal(arr, want)  # float32 bytes: exact, not JSON-rounded
    assert _points(online, "clouds/fmt", "rgb", "i=0")[0]["caption"] == "coloured"
    lidar = records(online, "clouds/fmt", "lidar")[0]
    assert lidar["boxes"] == [{**BOX, "corners": [[float(v) for v in c] for c in BOX["corners"]],
                               "color": [255.0, 0.0, 0.0]}]
    steps = records(online, "clouds/fmt", "xyz")
    assert [(r["step"], r["n"], len(r["boxes"])) for r in steps] == [(0, 500, 0), (1, 10, 1)]
    pane = online.get_json("/api/v1/envs/clouds%2Ffmt/panes/xyz")
    assert pane["kind"] == "object3d" and pane["data"]["latest"]["n"] == 10


def test_client_point_cloud_is_thinned_to_the_budget_on_read(server, sdk) -> None:
    c = sdk("clouds/big")
    big = np.arange(30_000 * 3, dtype=np.float32).reshape(-1, 3)
    c.point_cloud(big, win="scan", step=3, boxes=[BOX])
    assert c.flush(timeout=10)
    got, arr = _points(server, "clouds/big", "scan", "budget=1000")
    assert (got["n"], got["shown"], got["step"]) == (30_000, 1000, 3)
    assert len(set(arr[:, 0].tolist())) == 1000  # distinct points of the cloud, in its order
    assert np.isin(arr[:, 0], big[:, 0]).all() and (np.diff(arr[:, 0]) > 0).all()


def test_bad_clouds_are_refused_with_a_clear_message(server, sdk, online, tmp_path) -> None:
    with pytest.raises(ValueError, match="N×3"):
        paneboard.Object3D(np.zeros((4, 5)))
    with pytest.raises(ValueError, match="corners"):
        paneboard.Object3D({"points": np.zeros((4, 3)), "boxes": [{"corners": [[0, 0, 0]]}]})
    c = sdk("clouds/bad")
    c.point_cloud(np.zeros((3, 2)), win="w")  # rejected by the SDK, never raised into the loop
    assert c.rejected == 1
    bad = {"op": "update", "env": "clouds/bad", "win": "w", "kind": "object3d", "mode": "append",
           "records": [{"step": 0, "points": {"shape": [2, 3], "data": base64.b64encode(b"\0" * 20).decode()}}]}
    res = server.http("POST", "/api/v1/events", {"events": [bad]})  # bad events are answered one by one
    assert res["ok"] is False and "float32 (24 bytes), not 20" in res["errors"][0]["error"]
    nan = {**bad, "records": [{"step": 0, "points": {"shape": [1, 3], "data": base64.b64encode(
        np.array([0, np.nan, 0], "<f4").tobytes()).decode()}}]}
    res = server.http("POST", "/api/v1/events", {"events": [nan]})
    assert res["ok"] is False and "finite" in res["errors"][0]["error"]
    with pytest.raises(urllib.error.HTTPError) as err:  # nothing was stored
        _points(server, "clouds/bad", "w")
    assert err.value.code == 404
