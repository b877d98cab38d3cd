"""Imported contents are checked like live ones: a hand-made archive with bad hparams, meta, image, text or
histogram contents is refused (HTTP 400 and CLI) naming env, pane and field, and nothing is half-imported; a
malformed stored value is one pane's error, never a 500 for the env, the hparams view or other envs."""

from __future__ import annotations

import hashlib
import io
import json
import struct
import urllib.error
import urllib.request
import zlib

import pytest

from helpers.archives import make_tar
from paneboard.server.cli.main import main as dash_server


def png(width: int = 2, height: int = 2) -> bytes:
    """A real RGB PNG, written by hand (stdlib only)."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    rows = b"".join(b"\x00" + b"\x80\x40\x20" * width for _ in range(height))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))


PNG = png()
SHA = hashlib.sha256(PNG).hexdigest()
IMAGE = {"blob": SHA, "mime": "image/png", "width": 2, "height": 2}
HIST = {"min": 0.0, "max": 2.0, "num": 3.0, "sum": 3.0, "sum_squares": 5.0, "limits": [1.0, 2.0], "counts": [1.0, 2.0]}


def pane(win: str, kind: str, content, steps: list[dict] | None = None) -> dict:
    return {"win": win, "kind": kind, "title": win, "opts": {}, "content": content, "layout": None, "traces": [],
            "steps": steps or []}


def good_panes() -> list[dict]:
    return [pane("pic", "image", dict(IMAGE)), pane("note", "text", {"html": "<b>hi</b>"}),
            pane("w", "histogram", {"count": 1}, [{"step": 0, "wall": 1.0, "data": dict(HIST), "blob": None}])]


def good_meta() -> dict:
    return {"config": {"lr": 0.1}, "hparams": {".": {"hparams": {"lr": 0.1}, "metrics": {"acc": 0.9},
                                                     "domains": None, "wall": 1.0}},
            "views": {"mine": {"saved": 1.0, "layout": {"pic": {"x": 0, "y": 0, "w": 6, "h": 4}, "note": None}}},
            "custom_scalars": {"c": {"loss": ["Multiline", ["loss"]]}}, "best": {"acc": "max"}}


def archive(envs: dict[str, tuple[dict, list[dict]]]) -> bytes:
    """An env archive in the format export_envs writes (sharing/archive.py): manifest, env.json, panes.jsonl,
    steps/<p>.jsonl and blobs/<sha>, here with contents chosen by the test."""
    members: dict[str, bytes] = {}
    entries = []
    for e, (name, (meta, panes)) in enumerate(envs.items()):
        folder = f"envs/{e:04d}"
        entries.append({"name": name, "dir": folder})
        members[f"{folder}/env.json"] = json.dumps({"name": name, "meta": meta, "forked_from": None}).encode()
        lines = []
        for p, raw in enumerate(panes):
            steps = raw["steps"]
            if steps:
                members[f"{folder}/steps/{p}.jsonl"] = b"\n".join(json.dumps(s).encode() for s in steps) + b"\n"
            lines.append(json.dumps({**raw, "steps": len(steps)}).encode())
        members[f"{folder}/panes.jsonl"] = b"\n".join(lines) + b"\n"
    members[f"blobs/{SHA}"] = PNG
    members["manifest.json"] = json.dumps({"format": "paneboard-envs", "version": 1, "envs": entries,
                                           "blobs": [{"sha256": SHA, "mime": "image/png"}]}).encode()
    return make_tar(members)


def post(srv, path: str, body: bytes, ctype: str = "application/x-tar") -> tuple[int, dict]:
    req = urllib.request.Request(srv.url + path, data=body, method="POST", headers={"Content-Type": ctype})
    try:
        with urllib.request.urlopen(req, timeout=60) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def get(srv, path: str) -> tuple[int, dict]:
    try:
        with urllib.request.urlopen(srv.url + path, timeout=60) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def _meta(**change):
    return lambda meta, panes: ({**meta, **change}, panes)


def _pane(i: int, **change):
    return lambda meta, panes: (meta, [{**p, **change} if k == i else p for k, p in enumerate(panes)])


def _step_data(data):
    return _pane(2, steps=[{"step": 0, "wall": 1.0, "data": data, "blob": None}])


# (what is wrong, how, words the refusal must name)
HOSTILE = [
    ("hparams not sessions", _meta(hparams=[1, 2]), ["env 'bad'", "hparams"]),
    ("an hparam value an object", _meta(hparams={".": {"hparams": {"lr": {"x": 1}}, "metrics": {}, "wall": 1.0}}),
     ["env 'bad'", "hparams", "lr"]),
    ("metrics a list", _meta(hparams={".": {"hparams": {"lr": 1}, "metrics": [1], "wall": 1.0}}),
     ["env 'bad'", "metrics"]),
    ("config a list", _meta(config=[1]), ["env 'bad'", "config"]),
    ("a view's layout off the grid", _meta(views={"v": {"saved": 1.0, "layout": {"pic": {"x": 0, "y": 0, "w": 99,
                                                                                          "h": 1}}}}),
     ["env 'bad'", "view", "w"]),
    ("custom_scalars a string", _meta(custom_scalars="x"), ["env 'bad'", "custom_scalars"]),
    ("best direction", _meta(best={"acc": "sideways"}), ["env 'bad'", "best"]),
    ("image blob not a sha", _pane(0, content={**IMAGE, "blob": "../../etc/passwd"}), ["env 'bad'", "'pic'", "blob"]),
    ("image width text", _pane(0, content={**IMAGE, "width": "wide"}), ["env 'bad'", "'pic'", "width"]),
    ("image history not a list", _pane(0, content={**IMAGE, "history": 5}), ["env 'bad'", "'pic'", "history"]),
    ("text html a number", _pane(1, content={"html": 5}), ["env 'bad'", "'note'", "html"]),
    ("text content a list", _pane(1, content=None), ["env 'bad'", "'note'", "content"]),
    ("histogram limits text", _step_data({**HIST, "limits": "x"}), ["env 'bad'", "'w'", "limits"]),
    ("histogram counts short", _step_data({**HIST, "counts": [1.0]}), ["env 'bad'", "'w'", "counts"]),
    ("histogram count wrong", _pane(2, content={"count": 7}), ["env 'bad'", "'w'", "count"]),
]


@pytest.mark.parametrize("case", HOSTILE, ids=[h[0] for h in HOSTILE])
def test_bad_imported_contents_are_refused_naming_env_pane_and_field(server, case):
    _what, change, words = case
    meta, panes = change(good_meta(), good_panes())
    status, answer = post(server, "/api/v1/archive", archive({"fine": (good_meta(), good_panes()),
                                                             "bad": (meta, panes)}))
    assert status == 400, answer
    for word in words:
        assert word in answer["error"], answer
    assert server.get_json("/api/v1/envs")["envs"] == []  # nothing half-imported, not even the fine env
    assert get(server, "/api/v1/hparams")[0] == 200


def test_good_contents_import_and_read(server):
    status, answer = post(server, "/api/v1/archive", archive({"fine": (good_meta(), good_panes())}))
    assert status == 200, answer
    for win in ("pic", "note", "w"):
        assert get(server, f"/api/v1/envs/fine/panes/{win}")[0] == 200
    status, hp = get(server, "/api/v1/hparams")
    assert status == 200 and [r["env"] for r in hp["sessions"]] == ["fine"]


def test_cli_import_refuses_bad_contents(tmp_path, capsys):
    meta, panes = _pane(1, content={"html": 5})(good_meta(), good_panes())
    path = tmp_path / "bad.tar"
    path.write_bytes(archive({"bad": (meta, panes)}))
    db = tmp_path / "target.db"
    assert dash_server(["import-envs", str(path), "--db", str(db)]) == 2
    err = capsys.readouterr().err
    assert "env 'bad'" in err and "'note'" in err and "html" in err


def test_malformed_stored_values_are_one_panes_error_not_a_500(server):
    """Values that got into the database some other way (an older server, a hand edit): every read still works."""
    assert post(server, "/api/v1/archive", archive({"fine": (good_meta(), good_panes()),
                                                     "other": (good_meta(), good_panes())}))[0] == 200
    store = server.app.services.store
    with store.transaction() as tx:
        for win, content in (("pic", {"blob": 5, "width": "x", "history": 7}), ("note", {"html": ["x"]})):
            tx.update_pane(tx.get_pane("fine", win), content=content)
        tx.set_env_meta("fine", {"hparams": {".": {"hparams": [1], "metrics": "x", "domains": 3}},
                                 "config": [1], "best": {"acc": 5}, "views": 4, "custom_scalars": 2})
        hist = tx.put_pane("fine", "h2", "histogram", "h2", {}, {"count": 1})
        tx.append_steps(hist, 0, [(0.0, 1.0, {"limits": "x", "counts": {"a": 1}}, None)])
    status, env = get(server, "/api/v1/envs/fine/panes")
    assert status == 200, env
    by_win = {p["win"]: p for p in env["panes"]}
    assert "pic" in by_win["pic"].get("error", "") and "note" in by_win["note"].get("error", "")
    assert "error" not in by_win["w"] and "h2" in by_win["h2"].get("error", "")
    status, steps = get(server, "/api/v1/envs/fine/panes/h2/steps")
    assert status == 422 and "h2" in steps["error"]
    assert get(server, "/api/v1/envs/other/panes")[0] == 200
    status, hp = get(server, "/api/v1/hparams")
    assert status == 200 and "other" in [r["env"] for r in hp["sessions"]], hp
    with urllib.request.urlopen(server.url + "/api/v1/envs/fine/snapshot.html", timeout=60) as r:
        assert r.status == 200
        page = r.read().decode()
    assert "holds malformed text content" in page and "holds malformed image content" in page, page[-3000:]
    assert get(server, "/api/v1/runs")[0] == 200


def test_every_kind_exported_live_imports_under_the_checks(make_server):
    """The checks refuse nothing a live server stores: one pane of every kind, and every meta key, round-trip."""
    import base64
    import wave

    src = make_server("source")
    b64 = lambda data: base64.b64encode(data).decode()  # noqa: E731
    wav = io.BytesIO()
    with wave.open(wav, "wb") as w:
        w.setnchannels(1), w.setsampwidth(2), w.setframerate(8000), w.writeframes(bytes(800))
    matrix = struct.pack("<8f", *range(8))
    events = [
        {"op": "set", "win": "fig", "kind": "figure", "figure": {"data": [{"type": "bar", "x": [1], "y": [2]}],
                                                                  "layout": {"title": "b"}}},
        {"op": "set", "win": "props", "kind": "properties", "properties": [{"type": "text", "name": "a", "value": "x"}]},
        {"op": "set", "win": "net", "kind": "network", "graph": {"nodes": [{"label": "a"}, {"label": "b"}],
                                                                 "edges": [{"source": 0, "target": 1}]}},
        {"op": "set", "win": "mg", "kind": "model_graph", "graph": {"name": "net", "nodes": [
            {"id": "x", "op": "input"}, {"id": "y", "op": "relu", "inputs": ["x"], "shape": "[1]"}]}},
        {"op": "set", "win": "emb", "kind": "embeddings", "embeddings": {"data": [{"x": 1, "y": 2, "label": "a"}]}},
        {"op": "set", "win": "proj", "kind": "projector", "projector": {
            "step": 3, "matrix": {"shape": [4, 2], "dtype": "float32", "data": b64(matrix)},
            "metadata": {"header": ["label"], "rows": [["a"], ["b"], ["c"], ["d"]]},
            "sprite": {"data": b64(png(4, 4)), "single_image_dim": [2, 2]}}},
        {"op": "set", "win": "txt", "kind": "media", "records": [{"step": 0, "type": "text", "text": "*hi*"}]},
        {"op": "set", "win": "snd", "kind": "media", "records": [{"step": 0, "type": "audio", "mime": "audio/wav",
                                                                 "data": b64(wav.getvalue())}]},
        {"op": "set", "win": "img", "kind": "media", "records": [{"step": 0, "type": "image", "data": b64(PNG)}]},
        {"op": "set", "win": "pr", "kind": "pr_curve", "records": [{"step": 0, **{k: [1.0, 0.0] for k in (
            "tp", "fp", "tn", "fn", "recall")}, "precision": [1.0, None]}]},
        {"op": "set", "win": "line", "kind": "line", "traces": [{"name": "t", "x": [0, 1], "y": [1.0, None]}]},
        {"op": "set", "win": "pic", "kind": "image", "opts": {"store_history": True, "caption": "c"},
         "image": {"mime": "image/png", "data": b64(PNG)}},
        {"op": "update", "mode": "append", "win": "pic", "kind": "image", "image": {"mime": "image/png",
                                                                                   "data": b64(png(3, 1))}},
        {"op": "hparams", "session": "s1", "hparams": {"lr": 0.1, "opt": "adam"}, "metrics": {"acc": 0.5},
         "domains": {"opt": ["adam", "sgd"]}},
        {"op": "custom_scalars", "layout": {"c": {"m": ["Margin", ["a", "b", "c"]]}}},
        {"op": "run_best", "series": "acc", "direction": "max"},
        {"op": "save_view", "name": "v"},
    ]
    status, answer = post(src, "/api/v1/events", json.dumps({"events": [{"env": "all", **e} for e in events]}).encode(),
                          "application/json")
    assert status == 200 and not answer.get("errors"), answer
    with urllib.request.urlopen(src.url + "/api/v1/archive?envs=all", timeout=60) as r:
        tar = r.read()
    target = make_server("target")
    status, answer = post(target, "/api/v1/archive", tar)
    assert status == 200, answer
    assert len(target.get_json("/api/v1/envs/all/panes")["panes"]) == 12


def test_import_visdom_checks_each_window_and_survives_a_hostile_file(tmp_path, capsys):
    """import-visdom goes through the live ops' parse: bad windows are skipped with a problem each, a file's odd
    window order never crashes it, and what it stores reads back."""
    env_file = tmp_path / "hostile.json"
    env_file.write_text(json.dumps({"jsons": {
        "ok": {"i": 1, "type": "text", "content": "<b>kept</b>"},
        "odd": {"i": "x", "type": "properties", "content": "not a list"},
        "net": {"i": None, "type": "network", "content": {"nodes": 5}},
        "img": {"type": "image", "content": {"src": 5}},
        "nope": 5,
    }}))
    db = tmp_path / "visdom.db"
    assert dash_server(["import-visdom", str(env_file), "--db", str(db)]) == 0
    err = capsys.readouterr().err
    for win in ("odd", "net", "img", "nope"):
        assert f"hostile/{win}: skipped" in err, err
    from paneboard.server.store import open_store

    store = open_store(f"sqlite:///{db}")
    try:
        assert [p.win for p in store.list_panes("hostile")] == ["ok"]
    finally:
        store.close()
