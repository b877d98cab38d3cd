"""GET /api/v1/compare/images: one image tag of several runs in one answer (real server, real SDK): each run's steps,
the step it shows for the slider's step (its last at or before it, else its first) and the pictures there."""

from __future__ import annotations

import urllib.error

import numpy as np
import pytest

from helpers.browser import flushed

TAG = "samples"


def _picture(v: int) -> np.ndarray:
    return np.full((8, 8, 3), v, np.uint8)


def _log(sdk) -> None:
    a, b, c = sdk("mc/a"), sdk("mc/b"), sdk("mc/c")
    for s in (0, 10, 20):
        a.image(_picture(s), win=TAG, step=s, opts={"caption": f"a{s}"})
    a.image(_picture(11), win=TAG, step=10, opts={"caption": "a10-second"})  # two pictures at one step
    for s in (5, 15):
        b.image(_picture(s), win=TAG, step=s, boxes={"pred": {"box_data": [
            {"position": {"minX": 1, "maxX": 4, "minY": 1, "maxY": 4}, "domain": "pixel", "class_id": 1,
             "scores": {"conf": 0.5}}], "class_labels": {1: "cat"}}})
    c.image(_picture(30), win=TAG, step=30)
    c.image(_picture(1), win="other", step=0)
    for client in (a, b, c):
        flushed(client)


def _get(server, query: str):
    return server.get_json(f"/api/v1/compare/images?{query}")


def _error(server, query: str) -> tuple[int, str]:
    with pytest.raises(urllib.error.HTTPError) as err:
        _get(server, query)
    return err.value.code, err.value.read().decode()


def test_each_run_shows_its_last_step_at_or_before_the_slider_else_its_first(server, sdk) -> None:
    _log(sdk)
    got = _get(server, f"envs=mc/a,mc/b,mc/c&tag={TAG}&step=12")
    assert {t["tag"]: t["runs"] for t in got["tags"]} == {TAG: 3, "other": 1}
    runs = {r["env"]: r for r in got["runs"]}
    assert runs["mc/a"]["steps"] == [0, 10, 20] and runs["mc/b"]["steps"] == [5, 15]
    assert [runs[e]["step"] for e in ("mc/a", "mc/b", "mc/c")] == [10, 5, 30]
    assert [r["caption"] for r in runs["mc/a"]["records"]] == ["a10", "a10-second"]
    assert runs["mc/a"]["count"] == 2
    box = runs["mc/b"]["records"][0]["overlays"]["boxes"]["pred"]
    assert box["class_labels"] == {"1": "cat"} and len(box["boxes"]) == 1
    src = runs["mc/c"]["records"][0]["src"]
    assert src.startswith("api/v1/blobs/")


def test_without_a_step_each_run_shows_its_newest_and_a_tag_only_some_runs_have(server, sdk) -> None:
    _log(sdk)
    got = _get(server, f"envs=mc/a,mc/b,mc/c&tag={TAG}")
    assert [(r["env"], r["step"]) for r in got["runs"]] == [("mc/a", 20), ("mc/b", 15), ("mc/c", 30)]
    other = _get(server, "envs=mc/a,mc/b,mc/c&tag=other&step=0")
    assert [(r["env"], r["step"]) for r in other["runs"]] == [("mc/c", 0)]


def test_bad_requests_get_a_clear_4xx(server, sdk) -> None:
    _log(sdk)
    assert _error(server, "envs=mc/a&tag=nope")[0] == 404
    assert _error(server, "envs=mc/a,mc/zz&tag=samples")[0] == 404
    code, body = _error(server, "envs=" + ",".join(f"r{i}" for i in range(17)))
    assert code == 400 and "1..16" in body
    code, body = _error(server, "envs=mc/a&step=soon")
    assert code == 400 and "step must be a number" in body
    assert _error(server, "tag=samples")[0] == 400


def test_around_reads_the_neighbouring_slider_positions_in_the_same_answer(server, sdk) -> None:
    _log(sdk)
    got = _get(server, f"envs=mc/a,mc/b,mc/c&tag={TAG}&step=12&around=2")
    # The union of the runs' steps is 0 5 10 15 20 30; step 12's position is 10's: two either side.
    assert [f["step"] for f in got["frames"]] == [0, 5, 10, 15, 20]
    shown = {f["step"]: {r["env"]: r["step"] for r in f["runs"]} for f in got["frames"]}
    assert shown[0] == {"mc/a": 0, "mc/b": 5, "mc/c": 30}
    assert shown[15] == {"mc/a": 10, "mc/b": 15, "mc/c": 30}
    assert [r["caption"] for r in got["frames"][2]["runs"][0]["records"]] == ["a10", "a10-second"]
    assert _get(server, f"envs=mc/a&tag={TAG}")["frames"] == []
    assert _error(server, f"envs=mc/a&tag={TAG}&around=99")[0] == 400
