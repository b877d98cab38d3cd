"""Red-team areas of issue 30's second pass: websockets in the connection cap, imported contents, and revokes
across the servers of one PostgreSQL database (run by bench/redteam.py)."""

from __future__ import annotations

import contextlib
import json
import socket
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import free_port, stop  # noqa: E402
from redteam_common import ADMIN, Srv, check, line, make_tar, revoke_closes_socket, up  # noqa: E402


def ws_cap(srv: Srv, cap: int) -> None:
    """Upgraded websockets stay counted toward the per-address cap: `cap` open ones leave no room for more."""
    from websockets.sync.client import connect

    port = int(srv.url.rsplit(":", 1)[1])

    def full() -> tuple[bool, str]:
        with contextlib.ExitStack() as stack:
            for _ in range(cap):
                stack.enter_context(connect(f"ws://127.0.0.1:{port}/ws", open_timeout=10, origin=srv.url,
                                            additional_headers={"Authorization": f"Bearer {ADMIN}"}))
            with socket.create_connection(("127.0.0.1", port), timeout=10) as extra:
                extra.sendall(b"GET /api/v1/envs HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
                try:
                    answer = extra.recv(64)
                except OSError:
                    answer = b""
        return answer == b"", f"{cap} websockets open, then {answer[:12]!r}"
    check("slowloris", "open websockets count toward the per-address cap", full)
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:  # their slots come back as the server sees them close
        try:
            if srv.call("GET", "/api/v1/envs")[0] == 200:
                break
        except OSError:
            time.sleep(0.05)


def _archive(name: str, meta: dict, panes: list[tuple[dict, list[dict]]]) -> bytes:
    """An env archive as export_envs writes it (server/sharing/archive.py), with contents chosen here."""
    members = {"envs/0000/env.json": json.dumps({"name": name, "meta": meta}).encode(),
               "manifest.json": json.dumps({"format": "paneboard-envs", "version": 1, "blobs": [],
                                            "envs": [{"name": name, "dir": "envs/0000"}]}).encode()}
    lines = []
    for p, (pane, steps) in enumerate(panes):
        lines.append(json.dumps({"title": "", "opts": {}, "layout": None, "traces": [], **pane,
                                 "steps": len(steps)}))
        if steps:
            members[f"envs/0000/steps/{p}.jsonl"] = "\n".join(json.dumps(r) for r in steps).encode() + b"\n"
    members["envs/0000/panes.jsonl"] = "\n".join(lines).encode() + b"\n"
    return make_tar(members)


def imports(srv: Srv) -> None:
    """An archive's contents are checked as live ones (refused, nothing stored); reads of others never 500."""
    image = {"blob": "0" * 64, "mime": "image/png", "width": 1, "height": 1}
    cases = [
        ("hparams an object as a value", {"hparams": {".": {"hparams": {"lr": {"x": 1}}, "metrics": [1]}}}, []),
        ("hparams not sessions", {"hparams": [1, 2]}, []),
        ("config, views and best malformed", {"config": [1], "views": 4, "best": {"acc": 5}}, []),
        ("an image pane naming no picture", {}, [({"win": "i", "kind": "image", "content": image}, [])]),
        ("an image's history a number", {}, [({"win": "i", "kind": "image", "content": {**image, "history": 5}}, [])]),
        ("a text pane whose html is a number", {}, [({"win": "t", "kind": "text", "content": {"html": 5}}, [])]),
        ("a histogram record of text", {}, [({"win": "h", "kind": "histogram", "content": {"count": 1}},
                                             [{"step": 0, "wall": 0, "data": {"limits": "x", "counts": 5},
                                               "blob": None}])]),
    ]
    for name, meta, panes in cases:
        status = srv.call("POST", "/api/v1/archive", raw=_archive("rt_import", meta, panes),
                          ctype="application/x-tar")[0]
        check("imports", f"{name}: refused with a 4xx", lambda s=status: (
            400 <= s < 500 and srv.call("GET", "/api/v1/envs/rt_import")[0] == 404, str(s)))
    check("imports", "GET /api/v1/hparams answers 200", lambda: (srv.call("GET", "/api/v1/hparams")[0] == 200, ""))


def cli_revoke(srv: Srv, db: str) -> None:
    """A revoke through the CLI (no peer channel on SQLite) still closes the token's websocket on the server."""
    import subprocess


    srv.call("POST", "/api/v1/events", {"events": [line("pub")]})
    made = srv.call("POST", "/api/v1/tokens", {"envs": ["pub"]})[2]

    def closed() -> tuple[bool, str]:
        return revoke_closes_socket(srv, made["token"], lambda: subprocess.run(
            [sys.executable, "-m", "paneboard.server", "token", "revoke", str(made["id"]), "--db", db],
            check=True, capture_output=True, timeout=60), wait=8.0, what="the CLI revoke")
    check("share", "a CLI revoke closes its websocket on a running server", closed)


def peers(n_servers: int = 2) -> None:
    """A revoke on one server closes the token's websocket held by another server of the same PostgreSQL db."""
    import subprocess


    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
    from pgserver import TempPostgres

    try:
        pg = TempPostgres().start()
    except (RuntimeError, OSError, subprocess.SubprocessError) as exc:
        print(f"  skipped peers: no PostgreSQL cluster ({exc})")
        return
    procs: list[subprocess.Popen] = []
    try:
        url = pg.new_database()
        servers = []
        for _ in range(n_servers):
            port = free_port()
            procs.append(subprocess.Popen([sys.executable, "-m", "paneboard.server", "--host", "127.0.0.1", "--port",
                                           str(port), "--db", url, "--log-level", "warning", "--token", ADMIN],
                                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
            servers.append(up(Srv(f"http://127.0.0.1:{port}", procs[-1].pid), procs[-1]))
        a, b = servers[0], servers[-1]
        a.call("POST", "/api/v1/events", {"events": [line("pub")]})
        made = a.call("POST", "/api/v1/tokens", {"envs": ["pub"]})[2]

        def closed_elsewhere() -> tuple[bool, str]:
            return revoke_closes_socket(b, made["token"], lambda: a.call("DELETE", f"/api/v1/tokens/{made['id']}"),
                                        what="the revoke on the other server")
        check("peers", "a revoke closes the token's websocket on another server", closed_elsewhere)
    finally:
        for proc in procs:
            stop(proc)
        pg.stop()
