"""Access control against a real server: token login, cookies, CSRF/Origin checks, size limits, tunnel hint."""

from __future__ import annotations

import json
import logging
import subprocess
import sys
import time
import urllib.error
import urllib.request

import pytest
from websockets.exceptions import InvalidStatus
from websockets.sync.client import connect

import paneboard

TOKEN = "s3cret-token-for-tests"


def request(url: str, method: str = "GET", body: bytes | None = None, headers: dict | None = None):
    """(status, headers, body) without following redirects."""
    class NoRedirect(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args, **kwargs):
            return None

    opener = urllib.request.build_opener(NoRedirect)
    req = urllib.request.Request(url, data=body, method=method, headers=headers or {})
    try:
        with opener.open(req, timeout=30) as r:
            return r.status, r.headers, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.headers, e.read()


@pytest.fixture
def guarded(make_server):
    # Settings, not CLI flags: what is under test is the access check and the size limit, in-process.
    return make_server("auth", token=TOKEN, max_request_bytes=int(0.05 * 1024 * 1024))


def test_token_is_required_and_a_login_link_sets_an_httponly_cookie(guarded):
    status, _, body = request(guarded.url + "/api/v1/envs")
    assert status == 401 and "authentication required" in json.loads(body)["error"]
    status, _, _ = request(guarded.url + "/api/v1/envs", headers={"Authorization": f"Bearer {TOKEN}"})
    assert status == 200
    status, _, _ = request(guarded.url + "/api/v1/envs", headers={"Authorization": "Bearer wrong"})
    assert status == 401
    status, headers, _ = request(guarded.url + "/env/x?token=" + TOKEN)
    assert status == 303 and headers["Location"].endswith("/env/x")
    cookie = headers["Set-Cookie"]
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie and TOKEN in cookie
    status, _, page = request(guarded.url + "/env/x", headers={"Cookie": f"paneboard_token={TOKEN}"})
    assert status == 200 and b"/js/app.js" in page


def test_sdk_with_the_token_delivers_and_without_it_is_refused(guarded, caplog):
    caplog.set_level(logging.WARNING, logger="paneboard")
    good = paneboard.Client(server="http://127.0.0.1", port=guarded.port, env="auth", token=TOKEN)
    good.line(X=[0, 1], Y=[1, 2], win="w")
    assert good.flush(timeout=30)
    bad = paneboard.Client(server="http://127.0.0.1", port=guarded.port, env="auth", spool_dir=False)
    bad.line(X=[5], Y=[5], win="intruder")
    assert bad.flush(timeout=1.5) is False
    status, _, body = request(guarded.url + "/api/v1/envs/auth", headers={"Authorization": f"Bearer {TOKEN}"})
    assert [p["win"] for p in json.loads(body)["panes"]] == ["w"]
    good.close_connection(timeout=5)
    bad.close_connection(timeout=0.2)


def test_browser_channel_needs_the_cookie_and_a_matching_origin(guarded):
    ws_url = f"ws://127.0.0.1:{guarded.port}/ws"
    with pytest.raises(InvalidStatus):
        with connect(ws_url, open_timeout=5) as ws:
            ws.recv(timeout=2)
    cookie = {"Cookie": f"paneboard_token={TOKEN}"}
    with pytest.raises(InvalidStatus):
        with connect(ws_url, open_timeout=5, origin="http://evil.example", additional_headers=cookie) as ws:
            ws.recv(timeout=2)
    with connect(ws_url, open_timeout=5, origin=f"http://127.0.0.1:{guarded.port}", additional_headers=cookie) as ws:
        ws.send(json.dumps({"subscribe": None}))
        assert {"type": "subscribed", "env": None} in json.loads(ws.recv(timeout=5))


def test_cross_site_writes_are_refused(guarded):
    body = json.dumps({"events": [{"op": "set", "env": "csrf", "win": "t", "kind": "text", "content": "x"}]}).encode()
    cookie = {"Cookie": f"paneboard_token={TOKEN}", "Content-Type": "application/json"}
    status, _, msg = request(guarded.url + "/api/v1/events", "POST", body, {**cookie, "Origin": "http://evil.example"})
    assert status == 403 and "cross-site" in json.loads(msg)["error"]
    status, _, _ = request(guarded.url + "/api/v1/events", "POST", body,
                           {**cookie, "Origin": f"http://127.0.0.1:{guarded.port}"})
    assert status == 200
    status, _, _ = request(guarded.url + "/api/v1/envs/csrf", headers={"Authorization": f"Bearer {TOKEN}"})
    assert status == 200


def test_oversized_requests_get_413_and_nothing_stored_is_touched(guarded):
    auth = {"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"}
    small = json.dumps({"events": [{"op": "set", "env": "big", "win": "t", "kind": "text", "content": "ok"}]})
    assert request(guarded.url + "/api/v1/events", "POST", small.encode(), auth)[0] == 200
    huge = json.dumps({"events": [{"op": "set", "env": "big", "win": "t", "kind": "text", "content": "x" * 100_000}]})
    status, _, msg = request(guarded.url + "/api/v1/events", "POST", huge.encode(), auth)
    assert status == 413 and "error" in json.loads(msg)
    _, _, pane = request(guarded.url + "/api/v1/envs/big/panes/t", headers=auth)
    assert json.loads(pane)["data"]["html"] == "ok"


@pytest.mark.e2e  # runs `python -m paneboard.server` itself
def test_a_non_loopback_bind_without_token_generates_one_and_prints_it(tmp_path, unused_port):
    port = unused_port
    proc = subprocess.Popen([sys.executable, "-m", "paneboard.server", "--host", "0.0.0.0", "--port", str(port),
                             "--db", str(tmp_path / "open.db")], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True)
    try:
        lines = []
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and not any("PANEBOARD_TOKEN=" in line for line in lines):
            lines.append(proc.stdout.readline())
        token = next(line.split("PANEBOARD_TOKEN=")[1].strip() for line in lines if "PANEBOARD_TOKEN=" in line)
        assert len(token) >= 24
        url = f"http://127.0.0.1:{port}/api/v1/envs"
        for _ in range(200):
            try:
                status = request(url)[0]
                break
            except OSError:
                time.sleep(0.05)
        assert status == 401
        assert request(url, headers={"Authorization": f"Bearer {token}"})[0] == 200
    finally:
        proc.terminate()
        proc.wait(15)


@pytest.mark.e2e  # runs `python -m paneboard.server` itself
def test_print_tunnel_gives_the_ssh_command():
    out = subprocess.run([sys.executable, "-m", "paneboard.server", "--print-tunnel", "me@gpu-box", "--port", "9000"],
                         capture_output=True, text=True, timeout=30)
    assert out.returncode == 0 and out.stdout.strip() == "ssh -N -L 9000:localhost:9000 me@gpu-box"


def test_visdom_username_password_login_keeps_working(tmp_path, server_types):
    import visdom  # the real client from PyPI (README test command installs it)
    srv = server_types.InProcessServer(db=tmp_path / "login.db",
                                       options={"token": TOKEN, "username": "alice", "password": "pw"}).start()
    try:
        viz = visdom.Visdom(server="http://127.0.0.1", port=srv.port, env="vis", username="alice", password="pw",
                            use_incoming_socket=False, raise_exceptions=True)
        viz.line(X=[0, 1, 2], Y=[5, 6, 7], win="L")
        viz.text("hello", win="T")
        auth = {"Authorization": f"Bearer {TOKEN}"}
        status, _, body = request(srv.url + "/api/v1/envs/vis/panes/L/export?format=json", headers=auth)
        assert status == 200 and json.loads(body)["traces"][0]["y"] == [5, 6, 7]
        with pytest.raises(Exception, match="Authentication failed"):
            visdom.Visdom(server="http://127.0.0.1", port=srv.port, env="vis", username="alice", password="nope",
                          use_incoming_socket=False, raise_exceptions=True)
        status, _, _ = request(srv.url + "/events", "POST", json.dumps({"data": [], "win": "x", "eid": "vis"}).encode())
        assert status == 401  # no login, no token: refused
    finally:
        srv.stop()
