"""An env archive carries its run record (status, tags, notes, provenance, start and end, error, colour, fork point)
from one real server to another, through the API and the CLI; a malformed run record is refused whole."""

from __future__ import annotations

import json
import tarfile
from io import BytesIO

import pytest

import paneboard
from helpers.archives import make_tar
from helpers.http import request_raw
from paneboard.server.cli.main import main as dash_server

RUN_KEYS = ("status", "started", "ended", "tags", "notes", "provenance", "error", "fork")


def request(srv, method, path, data=None, ctype="application/json"):
    return request_raw(srv.url + path, method, data, {"Content-Type": ctype})


def job(srv, env: str, error: str | None = None, **kw) -> None:
    """A job of the real SDK: it starts a run (provenance: host, git, packages), logs, and ends it."""
    c = paneboard.Client(server="http://127.0.0.1", port=srv.port, env=env, spool_dir=False, console=False, **kw)
    c.line(Y=[1.0, 0.5], X=[0, 1], win="loss")
    c.end_run(error)
    assert c.flush(timeout=20)
    c.close_connection(timeout=5)


def runs(srv, envs) -> dict[str, dict]:
    out = {}
    for env in envs:
        run = srv.get_json(f"/api/v1/envs/{env}/run")
        out[env] = {k: run.get(k) for k in RUN_KEYS}
        out[env]["color"] = run.get("color")
    return out


@pytest.fixture
def source(server):
    job(server, "done", tags=["baseline", "lr-0.1"])
    job(server, "broke", error="Traceback (most recent call last):\n  ...\nValueError: nan loss")
    server.http("PUT", "/api/v1/envs/done/notes", {"notes": "# Best so far\nkeep **this** one"})
    server.http("PUT", "/api/v1/envs/done/color", {"color": "#ff8800"})
    server.http("POST", "/api/v1/envs/done/fork", {"to": "copy"})  # an env without a job's run record
    return server


def test_api_round_trip_keeps_the_run_record(source, make_server):
    envs = ["done", "broke", "copy"]
    before = runs(source, envs)
    assert before["done"]["status"] == "finished" and before["broke"]["status"] == "failed"
    assert before["done"]["provenance"]["host"] and before["done"]["color"] == "#ff8800"
    status, tar = request(source, "GET", f"/api/v1/archive?envs={','.join(envs)}")
    assert status == 200
    target = make_server("target")
    status, body = request(target, "POST", "/api/v1/archive", tar, "application/x-tar")
    assert status == 200, body
    assert runs(target, envs) == before
    listed = {r["env"]: r for r in target.get_json("/api/v1/runs")["runs"]}
    assert listed["broke"]["status"] == "failed" and listed["done"]["tags"] == ["baseline", "lr-0.1"]


def test_cli_round_trip_keeps_the_run_record(source, tmp_path, make_server):
    out = tmp_path / "runs.tar"
    assert dash_server(["export-envs", "done", "broke", "-o", str(out), "--db", str(source.db)]) == 0
    target_db = tmp_path / "cli-target.db"
    assert dash_server(["import-envs", str(out), "--db", str(target_db)]) == 0
    target = make_server("cli-target")
    assert runs(target, ["done", "broke"]) == runs(source, ["done", "broke"])


def test_a_bad_run_record_is_refused_whole(source, make_server):
    _, tar = request(source, "GET", "/api/v1/archive?envs=done")
    members = {}
    with tarfile.open(fileobj=BytesIO(tar)) as t:
        for m in t.getmembers():
            members[m.name] = t.extractfile(m).read()
    target = make_server("strict")
    for bad in ({"status": "exploded"}, {"tags": ["no spaces allowed"]}, {"started": "yesterday"}, {"extra": 1},
                "finished"):
        head = json.loads(members["envs/0000/env.json"])
        head["run"] = {**head["run"], **bad} if isinstance(bad, dict) else bad
        status, body = request(target, "POST", "/api/v1/archive",
                               make_tar({**members, "envs/0000/env.json": json.dumps(head).encode()}),
                               "application/x-tar")
        assert status == 400 and "run" in json.loads(body)["error"], (bad, body)
    assert target.get_json("/api/v1/envs")["envs"] == []
