"""Hostile run queries: a backtracking-bomb regex from a read-only share token answers at once while the server
keeps acking an SDK stream, and oversized repetitions are a 400, never a 500."""

from __future__ import annotations

import threading
import time
import urllib.error
import urllib.parse
import urllib.request

from helpers.http import request_json
from paneboard.server.sharing import tokens

HOSTILE = 'name ~ "(.*.*)*!"'  # exponential in the name's length under a backtracking engine (×3.3 per char)


def _get(srv, path, token=None):
    return request_json(srv.url + path, headers={"Authorization": f"Bearer {token}"} if token else {})


def _runs_path(query):
    return "/api/v1/runs?q=" + urllib.parse.quote(query)


def test_hostile_regex_from_a_share_token_answers_fast_while_acks_flow(server):
    # 15 characters: ~15 s per query under a backtracking engine here, so today's main fails in about a minute
    # (rather than never finishing); RE2 takes microseconds at any length.
    pub, hidden = "p" + "a" * 14, "h" + "a" * 14
    events = [{"op": "set", "env": env, "win": "loss", "kind": "line",
               "traces": [{"name": None, "x": [0.0], "y": [1.0]}]} for env in (pub, hidden)]
    assert server.http("POST", "/api/v1/events", {"events": events})["ok"] is not False
    share, _ = tokens.create(server.app.services.store, [pub])
    answers: list[tuple[int, float, list[str]]] = []

    def attack():
        for _ in range(3):
            t0 = time.monotonic()
            status, body = _get(server, _runs_path(HOSTILE), token=share)
            answers.append((status, time.monotonic() - t0, [r["env"] for r in body.get("runs", [])]))

    attacker = threading.Thread(target=attack, daemon=True)
    attacker.start()
    stream = server.client("stream")
    acks = []
    try:
        for step in range(20):
            stream.line(X=[step], Y=[step * 0.5], win="loss", update="append")
            t0 = time.monotonic()
            assert stream.flush(timeout=30)
            acks.append(time.monotonic() - t0)
    finally:
        stream.close_connection()
    attacker.join(120)
    assert not attacker.is_alive(), "the hostile query never answered"
    assert [a[0] for a in answers] == [200] * 3 and all(a[2] == [] for a in answers)
    # Bounded generously for a loaded machine: a backtracking engine takes hours on these names.
    assert max(a[1] for a in answers) < 3.0, answers
    assert max(acks) < 3.0, acks
    status, body = _get(server, _runs_path('name ~ "^pa+$"'), token=share)
    assert status == 200 and [r["env"] for r in body["runs"]] == [pub]  # the share sees its run, never the other


def test_bad_regexes_are_400_with_a_reason(server):
    for pattern, reason in (("a{4294967295}", "repetition"), ("a{2000,}", "repetition"), ("(?=x)", "lookaround"),
                            ("(", "missing"), ("x" * 1001, "longer than")):
        status, body = _get(server, _runs_path(f'name ~ "{pattern}"'))
        assert status == 400 and reason in body["error"], (pattern, status, body)
    assert _get(server, _runs_path('name ~ "a{2,3}"'))[0] == 200
