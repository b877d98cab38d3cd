"""Read-only share tokens: stored as hashes (SQLite and PostgreSQL), created by the admin (API and CLI), and a
share link that reads only its envs and cannot write through HTTP, the Visdom protocol or websockets."""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request

import pytest
from websockets.exceptions import InvalidStatus
from websockets.sync.client import connect

from paneboard.server.cli.main import main as dash_server
from paneboard.server.sharing import tokens
from paneboard.server.store import open_store
from paneboard.server.store.schema import ensure_schema

ADMIN = "admin-token-for-tests"


def call(srv, method, path, body=None, token=ADMIN, headers=None):
    """(status, decoded JSON or None) of one request with a bearer token (None: no credentials)."""
    hdrs = {"Content-Type": "application/json", **(headers or {})}
    if token:
        hdrs["Authorization"] = f"Bearer {token}"
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(srv.url + path, data=data, method=method, headers=hdrs)
    opener = urllib.request.build_opener(NoRedirect)
    try:
        with opener.open(req, timeout=30) as r:
            raw = r.read()
            return r.status, (json.loads(raw) if raw and r.headers.get_content_type() == "application/json" else None)
    except urllib.error.HTTPError as exc:
        raw = exc.read()
        return exc.code, (json.loads(raw) if raw and exc.headers.get_content_type() == "application/json" else None)


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


def test_store_keeps_share_tokens_as_hashes(db_url):
    ensure_schema(db_url, db_url)
    store = open_store(db_url)
    try:
        token, rec = tokens.create(store, ["a", "b", "a"], "for review")
        assert rec.envs == ("a", "b") and rec.name == "for review"
        assert store.find_share_token(tokens.token_hash(token)) == rec
        assert store.find_share_token(token) is None  # the token itself is not stored
        _, every = tokens.create(store, None)
        assert [t.id for t in store.list_share_tokens()] == [rec.id, every.id] and every.envs is None
        assert store.delete_share_token(rec.id) and not store.delete_share_token(rec.id)
        assert store.find_share_token(tokens.token_hash(token)) is None
        for bad in ([], ["ok", ""], ["x\n"], [7]):
            with pytest.raises(ValueError):
                tokens.create(store, bad)
        assert [t.id for t in store.list_share_tokens()] == [every.id]  # refused ones stored nothing
    finally:
        store.close()


@pytest.fixture
def guarded(make_server):
    """A server with an admin token, envs `pub` and `secret`, and a share token for `pub` alone."""
    srv = make_server(token=ADMIN)
    events = [{"op": "set", "env": env, "win": "loss", "kind": "line", "opts": {"title": "loss"},
               "traces": [{"name": None, "x": [0.0, 1.0, 2.0], "y": [3.0, 2.0, 1.0]}]} for env in ("pub", "secret")]
    assert call(srv, "POST", "/api/v1/events", {"events": events})[0] == 200
    status, made = call(srv, "POST", "/api/v1/tokens", {"envs": ["pub"], "name": "reviewer"})
    assert status == 201 and made["token"].startswith("pbs_") and made["url"].endswith("/share/" + made["token"])
    srv.share = made["token"]
    return srv


def test_share_token_reads_only_its_envs(guarded):
    share = guarded.share
    status, envs = call(guarded, "GET", "/api/v1/envs", token=share)
    assert status == 200 and [e["name"] for e in envs["envs"]] == ["pub"]
    assert call(guarded, "GET", "/api/v1/envs/pub/panes/loss", token=share)[0] == 200
    for path in ("/api/v1/envs/secret", "/api/v1/envs/secret/panes/loss", "/api/v1/envs/secret/panes/loss/export",
                 "/api/v1/compare?envs=pub,secret", "/api/v1/groups?envs=secret", "/api/v1/hparams?envs=secret",
                 "/env/secret", "/embed/secret", "/embed/pub/x?env=secret"):
        status, body = call(guarded, "GET", path, token=share)
        assert status == 404 and "not found" in body["error"], path
    assert call(guarded, "GET", "/api/v1/compare?envs=pub", token=share)[0] == 200
    status, runs = call(guarded, "GET", "/api/v1/runs", token=share)
    assert status == 200 and [r["env"] for r in runs["runs"]] == ["pub"]
    assert [r["env"] for r in call(guarded, "GET", "/api/v1/runs")[1]["runs"]] == ["pub", "secret"]
    for path in ("/api/v1/envs/secret/run", "/api/v1/envs/secret/config", "/api/v1/envs/secret/snapshot.html"):
        assert call(guarded, "GET", path, token=share)[0] == 404, path
    assert call(guarded, "GET", "/env/pub", token=share)[0] == 200
    # Unknown or revoked tokens get nothing.
    assert call(guarded, "GET", "/api/v1/envs", token="pbs_not-a-token")[0] == 401


def test_share_token_cannot_write(guarded):
    share = guarded.share
    attempts = [
        ("POST", "/api/v1/events", {"events": [{"op": "delete_env", "env": "pub"}]}),
        ("DELETE", "/api/v1/envs/pub", None), ("DELETE", "/api/v1/envs/pub/panes/loss", None),
        ("PUT", "/api/v1/envs/pub/meta", {"config": {"lr": 1}}), ("POST", "/api/v1/envs/pub/fork", {"to": "x"}),
        ("POST", "/api/v1/tokens", {"envs": None}), ("GET", "/api/v1/tokens", None),
        ("DELETE", "/api/v1/tokens/1", None),
        ("POST", "/events", {"eid": "pub", "win": "loss", "data": []}),  # the Visdom wire protocol
        ("POST", "/close", {"eid": "pub", "win": "loss"}),
    ]
    for method, path, body in attempts:
        status, answer = call(guarded, method, path, body, token=share)
        assert status == 403 and "error" in answer, (method, path, status)
    status, pane = call(guarded, "GET", "/api/v1/envs/pub/panes/loss")
    assert status == 200 and pane["data"]["traces"][0]["y"] == [3.0, 2.0, 1.0]
    assert call(guarded, "GET", "/api/v1/envs/pub/meta")[1]["meta"] == {}
    assert [t["name"] for t in call(guarded, "GET", "/api/v1/tokens")[1]["tokens"]] == ["reviewer"]


def test_share_websockets_read_only_their_envs(guarded):
    origin = f"http://127.0.0.1:{guarded.port}"
    cookie = {"Cookie": f"paneboard_token={guarded.share}"}
    for path in ("/ingest", "/vis_socket"):
        with pytest.raises(InvalidStatus) as refused:
            with connect(f"ws://127.0.0.1:{guarded.port}{path}", open_timeout=5, additional_headers=cookie) as ws:
                ws.recv(timeout=2)
        assert refused.value.response.status_code == 403
    with connect(f"ws://127.0.0.1:{guarded.port}/ws", open_timeout=5, origin=origin, additional_headers=cookie) as ws:
        ws.send(json.dumps({"subscribe": "secret"}))
        assert json.loads(ws.recv(timeout=5))[0]["type"] == "error"
        ws.send(json.dumps({"subscribe": None}))
        assert {"type": "subscribed", "env": None} in json.loads(ws.recv(timeout=5))
        # Changes to both envs: the env list of a share link only ever hears of its own.
        for env in ("secret", "pub"):
            ev = {"op": "update", "env": env, "win": "loss", "kind": "line", "mode": "append",
                  "traces": [{"name": None, "x": [3.0], "y": [0.5]}]}
            assert call(guarded, "POST", "/api/v1/events", {"events": [ev]})[0] == 200
        seen: set[str] = set()
        deadline = time.monotonic() + 5
        while "pub" not in seen and time.monotonic() < deadline:
            for msg in json.loads(ws.recv(timeout=5)):
                if msg["type"] == "env":
                    seen.add(msg["env"]["name"])
        assert seen == {"pub"}


def test_share_link_logs_in_with_a_session_cookie(guarded):
    status, _ = call(guarded, "GET", f"/share/{guarded.share}", token=None)
    assert status == 303
    req = urllib.request.Request(guarded.url + f"/share/{guarded.share}")
    try:
        urllib.request.build_opener(NoRedirect).open(req, timeout=10)
    except urllib.error.HTTPError as exc:
        assert exc.code == 303 and exc.headers["Location"] == "/env/pub"
        cookie = exc.headers["Set-Cookie"]
        assert cookie.startswith(f"paneboard_token={guarded.share}") and "HttpOnly" in cookie
        assert "Max-Age" not in cookie and "expires" not in cookie.lower()  # a session cookie
    headers = {"Cookie": f"paneboard_token={guarded.share}"}
    assert call(guarded, "GET", "/api/v1/envs/pub", token=None, headers=headers)[0] == 200
    assert call(guarded, "GET", "/api/v1/envs/secret", token=None, headers=headers)[0] == 404
    assert call(guarded, "GET", "/share/pbs_unknown", token=None)[0] == 404
    # Revoked: the link and the cookie stop working at once.
    (tok,) = call(guarded, "GET", "/api/v1/tokens")[1]["tokens"]
    assert call(guarded, "DELETE", f"/api/v1/tokens/{tok['id']}")[0] == 200
    assert call(guarded, "GET", "/api/v1/envs/pub", token=None, headers=headers)[0] == 401
    assert call(guarded, "GET", f"/share/{guarded.share}", token=None)[0] == 404
    assert call(guarded, "DELETE", f"/api/v1/tokens/{tok['id']}")[0] == 404


@pytest.mark.parametrize("body", [{"envs": "pub"}, {"envs": []}, {"envs": ["a\x00"]}, {"bogus": 1},
                                  {"envs": None, "name": 5}, [1]])
def test_bad_token_requests_get_400_and_create_nothing(guarded, body):
    status, answer = call(guarded, "POST", "/api/v1/tokens", body)
    assert status == 400 and "error" in answer
    assert len(call(guarded, "GET", "/api/v1/tokens")[1]["tokens"]) == 1
    assert call(guarded, "POST", "/api/v1/tokens", {"envs": None}, token=None)[0] == 401  # the admin's to make


def test_cli_token_create_list_revoke(tmp_path, capsys, make_server):
    db = str(tmp_path / "cli.db")
    assert dash_server(["token", "create", "--read-only", "--envs", "pub", "--name", "ci", "--db", db]) == 0
    token = capsys.readouterr().out.split("shown once:")[1].split()[0]
    assert token.startswith("pbs_")
    assert dash_server(["token", "list", "--db", db]) == 0
    assert capsys.readouterr().out.strip() == "1\tci\tpub"
    srv = make_server("cli", token=ADMIN)  # the same database file: the server honours the CLI's token
    assert srv.db == tmp_path / "cli.db"
    assert call(srv, "GET", "/api/v1/envs", token=token)[0] == 200
    assert call(srv, "POST", "/api/v1/events", {"events": []}, token=token)[0] == 403
    assert dash_server(["token", "revoke", "1", "--db", db]) == 0
    assert dash_server(["token", "revoke", "1", "--db", db]) == 1
    with pytest.raises(SystemExit):
        dash_server(["token", "create", "--db", db])  # --read-only is required: no other kind exists


def test_share_token_on_a_loopback_server_without_admin_token(server):
    share, _ = tokens.create(server.app.services.store, ["pub"])
    assert call(server, "GET", "/api/v1/envs/other", token=share)[0] == 404
    assert call(server, "POST", "/api/v1/events", {"events": []}, token=share)[0] == 403
    assert call(server, "POST", "/api/v1/events", {"events": []}, token=None)[0] == 200  # the local user writes


def test_revoking_a_share_token_closes_its_open_websockets(guarded):
    from websockets.exceptions import ConnectionClosed

    origin = f"http://127.0.0.1:{guarded.port}"
    cookie = {"Cookie": f"paneboard_token={guarded.share}"}
    token_id = call(guarded, "GET", "/api/v1/tokens")[1]["tokens"][0]["id"]
    with connect(f"ws://127.0.0.1:{guarded.port}/ws", open_timeout=5, origin=origin, additional_headers=cookie) as ws:
        ws.send(json.dumps({"subscribe": "pub"}))
        assert {"type": "subscribed", "env": "pub"} in json.loads(ws.recv(timeout=5))
        assert call(guarded, "DELETE", f"/api/v1/tokens/{token_id}")[0] == 200
        ev = {"op": "update", "env": "pub", "win": "loss", "kind": "line", "mode": "append",
              "traces": [{"name": None, "x": [9.0], "y": [0.1]}]}
        assert call(guarded, "POST", "/api/v1/events", {"events": [ev]})[0] == 200
        points = []
        with pytest.raises(ConnectionClosed) as closed:
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline:  # a timeout here: the revoked socket is still open
                points += [m for m in json.loads(ws.recv(timeout=deadline - time.monotonic())) if m["type"] != "env"]
        assert closed.value.rcvd is not None and closed.value.rcvd.code == 1008
        assert points == []  # nothing of the write after the revoke reached the revoked socket


def test_embed_answers_the_same_for_hidden_and_missing_envs(guarded):
    ev = {"op": "set", "env": "pub/sekrit9", "win": "w", "kind": "line", "traces": [{"name": None, "x": [0.0], "y": [1.0]}]}
    assert call(guarded, "POST", "/api/v1/events", {"events": [ev]})[0] == 200
    share = guarded.share
    answers = {}
    for name in ("pub/sekrit9", "pub/absent9"):
        req = urllib.request.Request(f"{guarded.url}/embed/{name}", headers={"Authorization": f"Bearer {share}"})
        with urllib.request.urlopen(req, timeout=30) as r:
            page = r.read().decode()
        answers[name] = (r.status, page.replace(name.rpartition("/")[2], "<win>"))
    assert answers["pub/sekrit9"] == answers["pub/absent9"]
    assert answers["pub/sekrit9"][0] == 200
    assert call(guarded, "GET", "/api/v1/envs/pub%2Fsekrit9", token=share)[0] == 404  # the API still hides it


def _closed_with(ws, code: int) -> None:
    """Wait for the server to close `ws` with `code` (a recv timeout: it is still open)."""
    from websockets.exceptions import ConnectionClosed

    with pytest.raises(ConnectionClosed) as closed:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            ws.recv(timeout=deadline - time.monotonic())
    assert closed.value.rcvd is not None and closed.value.rcvd.code == code


@pytest.mark.parametrize("revoke_with", ["api", "cli"])
def test_revoking_closes_the_tokens_websockets_on_every_server_of_the_database(postgres, server_types, tmp_path,
                                                                               revoke_with):
    url = postgres.new_database()
    servers = [server_types.InProcessServer(db=url, options={"token": ADMIN}) for _ in range(2)]
    try:
        a = servers[0].start()
        ev = {"op": "set", "env": "pub", "win": "loss", "kind": "line",
              "traces": [{"name": None, "x": [0.0], "y": [1.0]}]}
        assert call(a, "POST", "/api/v1/events", {"events": [ev]})[0] == 200
        status, made = call(a, "POST", "/api/v1/tokens", {"envs": ["pub"]})
        assert status == 201
        # Started after a's last HTTP request: each server's stop() counts threads started after its start as its own.
        b = servers[1].start()
        cookie = {"Cookie": f"paneboard_token={made['token']}"}
        with connect(f"ws://127.0.0.1:{a.port}/ws", open_timeout=5, origin=a.url, additional_headers=cookie) as ws:
            ws.send(json.dumps({"subscribe": "pub"}))
            assert {"type": "subscribed", "env": "pub"} in json.loads(ws.recv(timeout=5))
            if revoke_with == "api":  # revoked on server b; the socket is held by server a
                assert call(b, "DELETE", f"/api/v1/tokens/{made['id']}")[0] == 200
            else:
                assert dash_server(["token", "revoke", str(made["id"]), "--db", url]) == 0
            _closed_with(ws, 1008)
    finally:
        for srv in reversed(servers):
            srv.stop()


def test_a_cli_revoke_closes_the_websockets_of_a_running_sqlite_server(guarded):
    """No peer channel on SQLite: the server's sweep notices the token is gone and closes its sockets."""
    token_id = call(guarded, "GET", "/api/v1/tokens")[1]["tokens"][0]["id"]
    cookie = {"Cookie": f"paneboard_token={guarded.share}"}
    with connect(f"ws://127.0.0.1:{guarded.port}/ws", open_timeout=5, origin=guarded.url,
                 additional_headers=cookie) as ws:
        ws.send(json.dumps({"subscribe": "pub"}))
        assert {"type": "subscribed", "env": "pub"} in json.loads(ws.recv(timeout=5))
        assert dash_server(["token", "revoke", str(token_id), "--db", str(guarded.db)]) == 0
        _closed_with(ws, 1008)
