"""The real visdom client and server as the reference: text() of a list shows and reads back as in Visdom, and
an env saved by Visdom and imported equals the same calls made live against dash-server."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import numpy as np
import pytest
import visdom  # required: a missing client fails these tests

# torchnet's VisdomTextLogger and faster-rcnn's label lists: text() given a list or a tuple.
LINES = ["Printing: 1 of 4", "Printing: 2 of 4"]


def script(v: visdom.Visdom) -> None:
    """The same calls for the real Visdom server and for dash-server."""
    v.line(Y=np.array([1.0, 2.0, 3.0]), X=np.array([0, 1, 2]), win="loss", opts={"title": "loss"})
    v.line(Y=np.array([4.0]), X=np.array([3]), win="loss", update="append",
           opts={"markers": True, "markersize": 8, "markersymbol": "cross-thin-open", "mode": "lines+markers"})
    v.scatter(X=np.array([[0.0, 1.0], [1.0, 0.5], [2.0, 2.0]]), win="pts", opts={"title": "pts"})
    v.update_window_opts("pts", {"markerborderwidth": 2, "fillarea": True, "markersize": 5})
    v.line(Y=np.array([[1.0, 2.0], [2.0, 3.0]]), X=np.array([0, 1]), win="area", opts={"fillarea": True})
    v.line(Y=np.array([[3.0, 4.0]]), X=np.array([2]), win="area", update="append", opts={"fillarea": True})
    v.text(LINES, win="log")
    v.text(tuple(LINES), win="labels")
    v.text("plain", win="plain")


def visdom_server(env_path: Path, port: int) -> subprocess.Popen:
    code = 'import sys; sys.argv[0] = "visdom"; from visdom.server.run_server import main; main()'
    proc = subprocess.Popen([sys.executable, "-c", code, "-port", str(port), "-env_path", str(env_path),
                             "-bind_local", "-logging_level", "WARNING"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(600):
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/env_state", data=b"{}", timeout=1).close()
            return proc
        except OSError:
            time.sleep(0.05)  # polling a subprocess's port: there is nothing to wait on but the socket
    proc.terminate()
    raise RuntimeError("the Visdom server did not start")


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """The real Visdom server after script(): its windows (/win_data) and the env file it saved."""
    env_path = tmp_path_factory.mktemp("visdom_env")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = visdom_server(env_path, port)
    try:
        v = visdom.Visdom(server="http://127.0.0.1", port=port, env="exp", use_incoming_socket=False,
                          raise_exceptions=True)
        script(v)
        windows = json.loads(v.get_window_data(env="exp"))
        assert json.loads(v.save(["exp"])) == ["exp"]
    finally:
        proc.terminate()
        proc.wait(15)
    return windows, env_path / "exp.json"


def live(server) -> visdom.Visdom:
    v = visdom.Visdom(server="http://127.0.0.1", port=server.port, env="exp", use_incoming_socket=False,
                      raise_exceptions=True)
    script(v)
    return v


def test_text_list_is_joined_as_visdoms_page_joins_it(server, reference):
    v = live(server)
    # Visdom's page sets innerHTML to the stored list: JavaScript's String(list) joins the items with ",".
    for win in ("log", "labels"):
        assert server.get_json(f"/api/v1/envs/exp/panes/{win}")["data"]["html"] == ",".join(LINES)
    # /win_data answers the list as sent, as Visdom does (a tuple travels as a JSON list).
    windows, _ = reference
    for win in ("log", "labels", "plain"):
        ours = json.loads(v.get_window_data(win, env="exp"))
        assert ours["content"] == windows[win]["content"]
    assert json.loads(v.get_window_data(env="exp"))["log"]["content"] == LINES
    # An append turns the window into text, as the page shows it.
    v.text("Printing: 3 of 4", win="log", append=True)
    assert server.get_json("/api/v1/envs/exp/panes/log")["data"]["html"] == ",".join(LINES) + "<br>Printing: 3 of 4"


def comparable(window: dict) -> dict:
    return {k: v for k, v in window.items() if k != "contentID"}


@pytest.mark.e2e  # runs `python -m paneboard.server` itself
def test_imported_windows_equal_live_ones(server, server_types, reference, tmp_path):
    windows, saved = reference
    db = tmp_path / "imported.db"
    out = subprocess.run([sys.executable, "-m", "paneboard.server", "import-visdom", str(saved), "--db", str(db)],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    v = live(server)
    live_windows = json.loads(v.get_window_data(env="exp"))
    srv = server_types.InProcessServer(db=db).start()
    try:
        imported = srv.http("POST", "/win_data", {"eid": "exp", "win": None})
        assert set(imported) == set(live_windows) == set(windows)
        for win in windows:
            assert comparable(imported[win]) == comparable(live_windows[win]), win
        # and the window-level opts are Visdom's own
        for key in ("markers", "markersize", "markersymbol", "mode"):
            assert imported["loss"][key] == windows["loss"][key]
        for key in ("markerborderwidth", "fillarea", "markersize"):
            assert imported["pts"][key] == windows["pts"][key]
        # The pane's opts too (what the page draws from), for every opt the saved window kept; the opts of a
        # window's creation are not in Visdom's file, only what they did to its traces.
        for win, keys in (("loss", ("markers", "markersize", "markersymbol", "mode")),
                          ("pts", ("markerborderwidth", "fillarea", "markersize")), ("area", ("fillarea",))):
            a = srv.get_json(f"/api/v1/envs/exp/panes/{win}")["opts"]
            b = server.get_json(f"/api/v1/envs/exp/panes/{win}")["opts"]
            assert {k: a.get(k) for k in keys} == {k: b[k] for k in keys}, win
    finally:
        srv.stop()


def test_sdk_text_takes_a_list_as_the_visdom_client_does(server):
    c = server.client("sdk")
    c.text(tuple(LINES), win="log")
    assert c.flush(timeout=10)
    assert server.get_json("/api/v1/envs/sdk/panes/log")["data"]["html"] == ",".join(LINES)
    assert server.http("POST", "/win_data", {"eid": "sdk", "win": "log"})["content"] == LINES
    c.close_connection(timeout=5)
