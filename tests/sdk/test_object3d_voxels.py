"""Large point clouds are thinned by voxel grid on read (real SDK, real server): a sparse region (a far car in a
lidar sweep) keeps its points where an even stride over the cloud would drop nearly all of them."""

from __future__ import annotations

import base64
import urllib.parse

import numpy as np

DENSE = 40_000
SPARSE = 200


def _read(server, env: str, win: str, budget: int) -> np.ndarray:
    got = server.get_json(f"/api/v1/envs/{urllib.parse.quote(env, safe='')}/panes/{win}/points?budget={budget}")
    assert (got["n"], got["shown"]) == (DENSE + SPARSE, budget)
    return np.frombuffer(base64.b64decode(got["points"]), "<f4").reshape(got["shown"], got["cols"])


def test_a_sparse_region_keeps_its_points_when_a_cloud_is_thinned(server, sdk) -> None:
    rng = np.random.default_rng(1)
    dense = rng.normal(0, 0.5, (DENSE, 3))  # the ground near the sensor
    far = rng.uniform(-1, 1, (SPARSE, 3)) + [40, 0, 0]  # a car 40 m away: few returns, spread over its box
    cloud = np.vstack([dense, far]).astype(np.float32)
    colours = np.hstack([cloud, np.tile([[255, 0, 0]], (len(cloud), 1))]).astype(np.float32)
    c = sdk("clouds/voxels")
    c.point_cloud(cloud, win="lidar", step=0)
    c.point_cloud(colours, win="rgb", step=0)
    assert c.flush(timeout=10)

    arr = _read(server, "clouds/voxels", "lidar", 2000)
    kept_far = int((arr[:, 0] > 30).sum())
    # An even stride keeps 1 point in 20 (10 of the car's 200); one point per voxel keeps most of a sparse region.
    assert kept_far >= SPARSE * 0.8, kept_far
    assert len(np.unique(arr, axis=0)) == 2000  # distinct points of the cloud
    assert np.isin(arr.view([("", "<f4")] * 3).ravel(), cloud.view([("", "<f4")] * 3).ravel()).all()
    # Colour columns ride with their points: thinning picks rows by their position only.
    rgb = _read(server, "clouds/voxels", "rgb", 2000)
    assert (rgb[:, 3:] == [255, 0, 0]).all() and int((rgb[:, 0] > 30).sum()) == kept_far
