"""Inputs bench/fuzz.py found to crash a handler (a 5xx or a traceback in the log): each is now a 4xx JSON
error or a per-event rejection, and leaves nothing in the store that a later read could trip on."""

from __future__ import annotations

import json

from websockets.sync.client import connect

LONE = "\ud800"  # half of a UTF-16 pair: json.dumps writes it as the escape "\ud800", as a Python producer would


def post_events(api, events: list, raw: bytes | None = None):
    body = raw if raw is not None else json.dumps({"events": events}).encode()
    return api.post("/api/v1/events", data=body, content_type="application/json")


def test_lone_surrogates_in_http_bodies_are_refused_and_never_stored(api):
    # Were: a traceback in the writer (name), or stored and then every read of the env a 500 (text content).
    for event in ({"op": "set", "env": "s1", "win": "w", "kind": "text", "content": "x", "opts": {"title": LONE}},
                  {"op": "set", "env": "s1", "win": LONE, "kind": "text", "content": "x"},
                  {"op": "set", "env": "s1", "win": "w", "kind": "text", "content": "a" + LONE},
                  {"op": "set", "env": "s1", "win": "w", "kind": "figure",
                   "figure": {"data": [{"type": "bar", "x": [LONE]}], "layout": {}}}):
        answer = post_events(api, [event])
        assert answer.status_code == 400 and "surrogate" in answer.get_json()["error"], answer.get_data(as_text=True)
    answer = api.put("/api/v1/envs/s1/meta", data=json.dumps({"config": {"a": LONE}}), content_type="application/json")
    assert answer.status_code == 400 and "surrogate" in answer.get_json()["error"]
    assert api.get("/api/v1/envs/s1").status_code == 404  # nothing of it was stored
    # A proper pair (an emoji written as two escapes) is text like any other.
    assert post_events(api, [{"op": "set", "env": "s1", "win": "w", "kind": "text", "content": "😀"}],
                       raw=b'{"events": [{"op": "set", "env": "s1", "win": "w", "kind": "text", '
                           b'"content": "\\ud83d\\ude00"}]}').get_json()["ok"]
    assert api.get("/api/v1/envs/s1/panes/w").get_json()["data"]["html"] == "😀"


def test_deep_json_bodies_get_a_400(api):
    deep = b'{"events": ' + b"[" * 5000 + b"]" * 5000 + b"}"  # beyond orjson's depth, then Python's recursion
    answer = post_events(api, [], raw=deep)
    assert answer.status_code == 400 and "nested too deeply" in answer.get_json()["error"]
    answer = api.put("/api/v1/envs/e/meta", data=deep, content_type="application/json")
    assert answer.status_code == 400 and "error" in answer.get_json()


def test_out_of_range_numbers_in_http_events_are_rejected_alone(api):
    big = 10**400  # within what Python's parser reads; beyond float64 and 64-bit integers
    events = [
        {"op": "set", "env": "n", "win": "pr", "kind": "pr_curve", "records": [
            {"step": big, "tp": [1, 2], "fp": [1, 2], "tn": [1, 2], "fn": [1, 2], "precision": [1, 1], "recall": [1, 1]}]},
        {"op": "set", "env": "n", "win": "line", "kind": "line", "traces": [{"name": "a", "x": [0, big], "y": [1, 2]}]},
        {"op": "set", "env": "n", "win": "fig", "kind": "figure", "figure": {"data": [{"type": "bar", "y": [2**70]}]}},
        {"op": "set", "env": "n", "win": "ok", "kind": "text", "content": "kept"},
    ]
    answer = post_events(api, events)
    assert answer.status_code == 200, answer.get_data(as_text=True)
    body = answer.get_json()
    assert [e["index"] for e in body["errors"]] == [0, 1, 2]  # Were: 500 (OverflowError, TypeError)
    assert api.get("/api/v1/envs/n/panes/ok").get_json()["data"]["html"] == "kept"
    # orjson reads 2**64 as a float; a NaN literal sends the body through Python's parser, which keeps the int.
    answer = api.put("/api/v1/envs/n/meta", data=b'{"config": {"a": NaN, "b": 18446744073709551616}}',
                     content_type="application/json")
    assert answer.status_code == 400 and "invalid event" in answer.get_json()["error"]  # Was: 500 (TypeError)
    answer = api.put("/api/v1/envs/n/panes/ok/layout", data=json.dumps({"x": 0, "y": big, "w": 2, "h": 2}),
                     content_type="application/json")
    assert answer.status_code == 400 and "layout: y must be a number" in answer.get_json()["error"]  # Was: 500


def test_ingest_rejects_lone_surrogates_per_event_and_the_store_stays_readable(server):
    # Were: a writer traceback ("a batch of 1 jobs failed to commit") for a name, and a text pane stored
    # with it, after which reading the env's panes answered 500 forever.
    with connect(server.url.replace("http", "ws") + "/ingest") as ws:
        ws.send(json.dumps({"hello": {"client": "surrogates"}}))
        assert "welcome" in json.loads(ws.recv(timeout=10))
        batch = [{"s": 1, "op": "set", "env": "u", "win": "w" + LONE, "kind": "text", "content": "x"},
                 {"s": 2, "op": "set", "env": "u", "win": "t", "kind": "text", "content": "x" + LONE},
                 {"s": 3, "op": "set", "env": "u", "win": "ok", "kind": "text", "content": "kept 😀"}]
        ws.send(json.dumps({"batch": batch}))  # ensure_ascii: the frame holds "\ud800" escapes
        reply = json.loads(ws.recv(timeout=30))
    assert reply["ack"] == 3
    assert {r["s"] for r in reply["rejected"]} == {1, 2}
    assert all("surrogate" in r["error"] for r in reply["rejected"])
    panes = server.get_json("/api/v1/envs/u/panes")["panes"]
    assert [(p["win"], p["data"]["html"]) for p in panes] == [("ok", "kept 😀")]
    assert "Traceback" not in server.log()


def test_ingest_acks_a_batch_whose_sequence_numbers_exceed_64_bits(server):
    # Was: the event got past parsing with s = 2**64, its rejection could not be written into the ack (orjson
    # refuses such integers), the ack callback died on the event loop and the client waited forever.
    with connect(server.url.replace("http", "ws") + "/ingest") as ws:
        ws.send(json.dumps({"hello": {"client": "big-seq"}}))
        assert "welcome" in json.loads(ws.recv(timeout=10))
        batch = [{"s": 2**64, "op": "update", "env": "q", "win": "f", "kind": "figure", "mode": "appendRow",
                  "traces": [{"type": "heatmap", "z": [[5, 6]], "y": ["r"]}]},
                 {"s": 10**30, "op": "set", "env": "q", "win": "t", "kind": "text", "content": "never"},
                 {"s": 3, "op": "set", "env": "q", "win": "ok", "kind": "text", "content": "kept"}]
        ws.send(json.dumps({"batch": batch}))
        reply = json.loads(ws.recv(timeout=30))
    assert reply["ack"] == 3
    assert [r["s"] for r in reply["rejected"]] == [None, None]  # no sequence number that could be stored
    assert all("s must be an integer from 0 to" in r["error"] for r in reply["rejected"])
    assert [p["win"] for p in server.get_json("/api/v1/envs/q")["panes"]] == ["ok"]
    assert "Traceback" not in server.log() and "Exception" not in server.log()
