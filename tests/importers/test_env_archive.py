"""Env archives: export from one real server, import into another (API and CLI, SQLite and PostgreSQL), and every
point (NaN, Inf and wall times included), step record, blob, layout, meta and console line arrives; bad archives
change nothing."""

from __future__ import annotations

import io
import json
import tarfile

import numpy as np
import pytest

import paneboard
from helpers.archives import make_tar
from helpers.http import request_raw
from paneboard.server.cli.main import main as dash_server
from paneboard.server.store import open_store

ENVS = ("runs/a", "runs/b")


def request(srv, method, path, data=None, ctype="application/json"):
    return request_raw(srv.url + path, method, data, {"Content-Type": ctype})


def populate(srv) -> None:
    """Two runs: multi-trace lines over several chunks with NaN/Inf, scatter, text, image, histogram and image steps,
    config, a saved view and a placed pane."""
    rng = np.random.default_rng(5)
    for k, env in enumerate(ENVS):
        c = srv.client(env)
        x = np.arange(6000, dtype=float)
        y = rng.normal(size=6000)
        y[[10, 4000]] = np.nan
        y[20] = np.inf
        y[21] = -np.inf
        for lo in range(0, 6000, 1500):  # several appends: several wall times and chunks
            c.line(X=np.column_stack([x[lo:lo + 1500]] * 2), Y=np.column_stack([y[lo:lo + 1500], -y[lo:lo + 1500]]),
                   win="loss", update="append", opts={"title": "loss", "legend": ["train", "val"]})
        c.scatter(X=rng.normal(size=(40, 2)), Y=rng.integers(1, 3, 40), win="emb")
        c.text(f"<i>run {k}</i>", win="log")
        c.image(rng.random((3, 8, 12)), win="sample")
        assert c.flush(timeout=20)
        w = paneboard.SummaryWriter(log_dir=env, client=c)
        for step in range(3):
            w.add_histogram("weights", rng.normal(size=500), step)
            w.add_image("pred", rng.random((3, 6, 6)), step)
        w.flush()
        assert c.flush(timeout=20)
        c.close_connection(timeout=5)
        srv.http("PUT", f"/api/v1/envs/{env}/meta", {"config": {"lr": 0.1 * (k + 1), "seed": k}})
        srv.http("PUT", f"/api/v1/envs/{env}/panes/log/layout", {"x": 6, "y": 0, "w": 6, "h": 4})
        srv.http("POST", f"/api/v1/envs/{env}/views", {"name": "mine"})
        # The console: two ranks, a bar still open, text that JSON must escape.
        srv.http("POST", "/api/v1/events", {"events": [
            *({"op": "console", "env": env, "rank": 0, "lines": [[i + 1, 1000.0 + i, "stdout", f"línea {i} \t\"é\""]
                                                                for i in range(lo, lo + 1250)]} for lo in (0, 1250)),
            {"op": "console", "env": env, "rank": 3, "lines": [[1, 1001.5, "stderr", "Traceback"],
                                                               [2, 1002.5, "stderr", " 40%|####", True]]}]})


def dump(store, env: str) -> dict:
    """Everything an env holds, read through the store: points as exact bytes (NaN and Inf survive)."""
    meta = store.get_env_meta(env)
    meta["views"] = {k: {"layout": v["layout"]} for k, v in (meta.get("views") or {}).items()}  # not the save time
    out = {"meta": meta, "panes": []}
    for pane in store.list_panes(env):
        traces = []
        for t in store.list_traces(pane):
            blocks = list(store.export_series(t))
            pts = np.concatenate([np.column_stack(b) for b in blocks]) if blocks else np.empty((0, 3))
            traces.append((t.name, t.style, t.total, pts.tobytes()))
        steps, _ = store.step_index(pane)
        rows = [(r.step, r.wall, json.dumps(r.data, sort_keys=True), r.blob)
                for r in store.read_steps(pane, list(range(len(steps))))]
        blobs = sorted({r[3] for r in rows if r[3]} | ({pane.content["blob"]} if (pane.content or {}).get("blob") else set()))
        out["panes"].append({"win": pane.win, "kind": pane.kind, "title": pane.title, "opts": pane.opts,
                             "content": pane.content, "layout": pane.layout, "traces": traces, "steps": rows,
                             "blobs": [(sha, store.get_blob(sha)) for sha in blobs]})
    out["console"] = {rank: [line.to_json() for line in store.read_console(env, rank, 0, 10_000)]
                      for rank in store.console_ranks(env)}
    return out


@pytest.fixture
def source(make_server):
    srv = make_server("source")
    populate(srv)
    return srv


def test_archive_round_trip_between_two_servers(source, make_server):
    status, tar = request(source, "GET", f"/api/v1/archive?envs={','.join(ENVS)}")
    assert status == 200
    target = make_server("target")
    status, body = request(target, "POST", "/api/v1/archive", tar, "application/x-tar")
    assert status == 200, body
    answer = json.loads(body)
    assert answer["envs"] == list(ENVS) and answer["points"] == 2 * (2 * 6000 + 40) and answer["blobs"] == 8
    a, b = source.app.services.store, target.app.services.store
    for env in ENVS:
        want, got = dump(a, env), dump(b, env)
        assert [p["win"] for p in got["panes"]] == [p["win"] for p in want["panes"]]
        assert {p["kind"] for p in got["panes"]} >= {"line", "scatter", "text", "image", "histogram"}
        assert got == want
        assert sum(len(p["steps"]) for p in got["panes"]) == 6
        assert [len(got["console"][r]) for r in (0, 3)] == [2500, 2] and got["console"][3][1]["open"]
    # The target serves the imported data like its own: a budgeted read and a blob.
    pane = target.get_json("/api/v1/envs/runs%2Fa/panes/loss?points=100")
    assert pane["data"]["traces"][0]["total"] == 6000
    # Again: refused as a whole (409), nothing changed; with replace=1 it overwrites.
    status, body = request(target, "POST", "/api/v1/archive", tar, "application/x-tar")
    assert status == 409 and b"already exist" in body
    assert request(target, "POST", "/api/v1/archive?replace=1", tar, "application/x-tar")[0] == 200
    assert dump(b, ENVS[0]) == dump(a, ENVS[0])
    assert len(target.get_json("/api/v1/envs")["envs"]) == 2


def _edit(tar: bytes, name: str, change) -> bytes:
    with tarfile.open(fileobj=io.BytesIO(tar)) as t:
        members = {m.name: t.extractfile(m).read() for m in t.getmembers()}
    members[name] = change(members[name])
    return make_tar(members)


def test_bad_archives_get_400_and_change_nothing(source, make_server):
    _, tar = request(source, "GET", "/api/v1/archive?envs=runs/a")
    target = make_server("target")
    with tarfile.open(fileobj=io.BytesIO(tar)) as t:
        manifest = json.loads(t.extractfile("manifest.json").read())
        points = next(n for n in t.getnames() if n.endswith(".f64"))
        blob = next(n for n in t.getnames() if n.startswith("blobs/"))
    bad = [
        b"not a tar at all",
        make_tar({"something.txt": b"x"}),
        _edit(tar, "manifest.json", lambda b: json.dumps({**manifest, "format": "other"}).encode()),
        _edit(tar, points, lambda b: b[:-8]),  # a truncated points file
        _edit(tar, blob, lambda b: b + b"x"),  # a blob that does not match its hash
        _edit(tar, "envs/0000/panes.jsonl", lambda b: b.replace(b'"kind":"line"', b'"kind":"nope"', 1)),
        _edit(tar, "envs/0000/panes.jsonl", lambda b: b.replace(b'"w":6,', b'"w":99,', 1)),  # off the grid
        _edit(tar, "envs/0000/env.json", lambda b: b.replace(b'"runs/a"', b'""')),
        _edit(tar, "envs/0000/panes.jsonl", lambda b: b"{" + b),
        _edit(tar, "envs/0000/console/3.0.jsonl", lambda b: b.replace(b'"stderr"', b'"stdin"', 1)),
        _edit(tar, "envs/0000/console/0.0.jsonl", lambda b: b.split(b"\n", 1)[1]),  # a line short of its count
        _edit(tar, "envs/0000/env.json", lambda b: b.replace(b'"rank":3', b'"rank":-3', 1)),
    ]
    for body in bad:
        status, answer = request(target, "POST", "/api/v1/archive", body, "application/x-tar")
        assert status == 400 and "error" in json.loads(answer), answer
    assert target.get_json("/api/v1/envs")["envs"] == []
    assert request(target, "GET", "/api/v1/archive?envs=nope")[0] == 404
    assert request(target, "GET", "/api/v1/archive")[0] == 400


def test_cli_export_and_import_on_both_backends(source, db_url, tmp_path, capsys):
    out = tmp_path / "runs.tar"
    assert dash_server(["export-envs", *ENVS, "-o", str(out), "--db", str(source.db)]) == 0
    printed = capsys.readouterr().out
    assert "2 envs" in printed and "5,004 console lines" in printed
    assert dash_server(["import-envs", str(out), "--db", db_url]) == 0
    assert dash_server(["import-envs", str(out), "--db", db_url]) == 1  # exists: refused
    assert "already exist" in capsys.readouterr().err
    assert dash_server(["import-envs", str(out), "--db", db_url, "--replace"]) == 0
    store = open_store(db_url)
    try:
        for env in ENVS:
            assert dump(store, env) == dump(source.app.services.store, env)
    finally:
        store.close()
    assert dash_server(["export-envs", "nope", "-o", str(tmp_path / "x.tar"), "--db", db_url]) == 1
    (tmp_path / "junk.tar").write_bytes(b"junk")
    assert dash_server(["import-envs", str(tmp_path / "junk.tar"), "--db", db_url]) == 2
