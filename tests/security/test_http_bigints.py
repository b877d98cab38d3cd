"""Bodies that once stored what reads could not encode, or answered 500: integers beyond 64 bits beside a NaN,
an events batch whose answer could not be written after storing it, a manifest whose blobs is not a list."""

from __future__ import annotations

import io
import json
import tarfile

from helpers.http import request_json

BIG = str(2 ** 70)


def raw(srv, method, path, data: bytes, ctype="application/json"):
    return request_json(srv.url + path, method, data, {"Content-Type": ctype}, timeout=30)


def test_huge_integers_beside_nan_are_refused_and_reads_never_500(server):
    server.http("POST", "/api/v1/events", {"events": [{"op": "set", "env": "e", "win": "w", "kind": "line",
                                                       "traces": [{"name": None, "x": [0.0], "y": [1.0]}]}]})
    bodies = [
        ("PUT", "/api/v1/envs/e/meta", '{"config": {"lr": NaN, "steps": BIG}}'),
        ("PUT", "/api/v1/envs/e/config", '{"config": {"a": NaN, "b": [BIG]}}'),
        ("PUT", "/api/v1/envs/e/tags", '{"add": ["x"], "n": NaN, "m": -BIG}'),
        ("POST", "/api/v1/events", '{"events": [{"op": "set", "env": "e", "win": "o", "kind": "line", '
                                   '"opts": {"title": "t", "n": BIG}, "traces": [{"name": null, "x": [0.0], '
                                   '"y": [NaN]}]}]}'),
        ("POST", "/api/v1/events", '{"events": [{"op": "set", "env": "e", "win": "o", "kind": "text", '
                                   '"content": {"text": "t", "n": [BIG, NaN]}}]}'),
    ]
    for method, path, body in bodies:
        status, answer = raw(server, method, path, body.replace("BIG", BIG).encode())
        refused = 400 <= status < 500 and "error" in answer or answer.get("ok") is False
        assert refused, (path, status, answer)
    for path in ("/api/v1/envs/e", "/api/v1/envs/e/meta", "/api/v1/envs/e/run", "/api/v1/runs", "/api/v1/envs"):
        assert raw(server, "GET", path, None)[0] == 200, path


def test_an_events_batch_is_answered_once_stored_never_500(server):
    good = {"op": "set", "env": "b", "win": "w", "kind": "line", "traces": [{"name": None, "x": [0.0], "y": [1.0]}]}
    body = ('{"events": [GOOD, {"op": "set", "env": "b", "win": "v", "s": BIG, "y": NaN}]}'
            .replace("GOOD", json.dumps(good)).replace("BIG", BIG).encode())
    status, answer = raw(server, "POST", "/api/v1/events", body)
    assert status < 500, answer
    # A seq number or text the answer cannot echo (a huge s, an error holding odd text) is left out, not a 500.
    body = json.dumps({"events": [good, {"op": "set", "env": "b", "win": "v", "s": {"x": [1] * 3}}]}).encode()
    status, answer = raw(server, "POST", "/api/v1/events", body)
    assert status == 200 and answer["ok"] is False and len(answer["errors"]) == 1, answer
    assert raw(server, "GET", "/api/v1/envs/b/panes/w", None)[0] == 200


def test_archive_manifest_blobs_not_a_list_is_400(server):
    manifest = {"format": "paneboard-envs", "version": 1, "envs": [], "blobs": 7}
    for blobs in (7, "x", {"a": 1}, [7], [None]):
        manifest["blobs"] = blobs
        status, answer = raw(server, "POST", "/api/v1/archive", _tar(manifest), "application/x-tar")
        assert status == 400 and "error" in answer, (blobs, status, answer)


def _tar(manifest) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as t:
        data = json.dumps(manifest).encode()
        info = tarfile.TarInfo("manifest.json")
        info.size = len(data)
        t.addfile(info, io.BytesIO(data))
    return buf.getvalue()
