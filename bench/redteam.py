"""Red-team regression suite: drive issue 30's attacks against a real dash-server and print tried/held/failed.

    python bench/redteam.py [--quick]

Areas: queries (ReDoS from a share token while an SDK streams), blobs (an archive's text/html and script),
archive bombs (declared and gzip members, server RSS), auth (bodies before the token), share (revoked sockets,
API and CLI), embed (writes, hidden vs missing), slowloris (header deadline, per-address cap, websockets counted),
bigints (500s), retention, imports (an archive's hparams, image, text and histogram contents), ingest3 and
memory3 (floods of tiny events, the largest legal frame or body of each kind: peak RSS), peers (a revoke
closes sockets on every server of a PostgreSQL database; needs PostgreSQL's binaries, else printed as skipped).
Legends are checked in Chromium by tests/browser/test_browser_security.py. Exit 1 on any failure. Loopback only.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import socket
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import free_port, rss_mb, stop  # noqa: E402
from redteam_areas import cli_revoke, imports, peers, ws_cap  # noqa: E402
from redteam_common import (  # noqa: E402
    ADMIN,
    RESULTS,
    Srv,
    check,
    declared,
    line,
    make_tar,
    revoke_closes_socket,
    up,
)
from redteam_round3_client import artifacts, notifier, terminal  # noqa: E402
from redteam_round3_data import share_reads, sparse_archive  # noqa: E402
from redteam_round3_ingest import ingest_round3  # noqa: E402
from redteam_round3_memory import memory  # noqa: E402

HOSTILE = 'name ~ "(.*.*)*!"'


def queries(srv: Srv, n_runs: int) -> None:
    import paneboard

    envs = [f"pub_{i}_" + "a" * 40 for i in range(n_runs)] + ["hidden_" + "a" * 40]
    srv.call("POST", "/api/v1/events", {"events": [line(e) for e in envs]})
    share = srv.call("POST", "/api/v1/tokens", {"envs": envs[:-1]})[2]["token"]
    path = "/api/v1/runs?q=" + urllib.parse.quote(HOSTILE)
    client = paneboard.Client(server="http://127.0.0.1", port=int(srv.url.rsplit(":", 1)[1]), env="stream",
                              token=ADMIN, spool_dir=False)
    client.line(X=[0], Y=[0], win="loss", update="append")
    client.flush(timeout=30)  # connected and acked once: the acks below are the stream's, not its handshake
    acks: list[float] = []
    answers: list[float] = []

    def attack() -> None:
        for _ in range(5):
            t0 = time.monotonic()
            srv.call("GET", path, token=share)
            answers.append(time.monotonic() - t0)
    attacker = threading.Thread(target=attack)
    attacker.start()
    for step in range(40):
        client.line(X=[step], Y=[step], win="loss", update="append")
        t0 = time.monotonic()
        client.flush(timeout=30)
        acks.append(time.monotonic() - t0)
    attacker.join(120)
    client.close_connection(timeout=5)
    acks.sort()
    p99 = acks[min(len(acks) - 1, int(len(acks) * 0.99))]
    check("queries", "ReDoS from a share token answers < 1 s", lambda: (max(answers) < 1.0, f"max {max(answers):.3f} s"))
    check("queries", "SDK acks p99 < 1 s meanwhile", lambda: (p99 < 1.0, f"p99 {p99:.3f} s"))
    check("queries", "a{4294967295} is a 4xx", lambda: (
        400 <= srv.call("GET", "/api/v1/runs?q=" + urllib.parse.quote('name ~ "a{4294967295}"'))[0] < 500, ""))
    check("queries", "a share token never lists a hidden run", lambda: (
        all(not r["env"].startswith("hidden") for r in srv.call("GET", "/api/v1/runs", token=share)[2]["runs"]), ""))


def blobs(srv: Srv) -> None:
    html = b"<html><script>alert(1)</script></html>"
    sha = hashlib.sha256(html).hexdigest()
    manifest = {"format": "paneboard-envs", "version": 1, "envs": [{"dir": "envs/0000"}],
                "blobs": [{"sha256": sha, "mime": "text/html"}]}
    # A text pane naming the blob (an image pane must hold a picture: import checks contents as live ones).
    pane = {"win": "t", "kind": "text", "title": "", "opts": {}, "layout": None, "content": {"html": sha},
            "traces": [], "steps": 0}
    tar = make_tar({"envs/0000/env.json": json.dumps({"name": "rt_blob", "meta": {}}).encode(),
                    "envs/0000/panes.jsonl": json.dumps(pane).encode() + b"\n", f"blobs/{sha}": html,
                    "manifest.json": json.dumps(manifest).encode()})
    status, _, answer = srv.call("POST", "/api/v1/archive", raw=tar, ctype="application/x-tar")

    def served() -> tuple[bool, str]:
        if status != 200:
            return True, f"import refused ({status})"
        st, headers, _ = srv.call("GET", f"/api/v1/blobs/{sha}")
        ok = st == 200 and headers.get_content_type() == "application/octet-stream" and \
            headers["X-Content-Type-Options"] == "nosniff" and (headers["Content-Disposition"] or "").startswith("attachment")
        return ok, headers["Content-Type"]
    check("blobs", "an archive's text/html blob is an attachment, nosniff", served)


def bombs(srv: Srv, gz_mb: int) -> None:
    before = rss_mb(srv.pid)
    cases = [("a 10 KB tar declaring 8 GB", declared(8 << 30)),
             ("a .tar.gz declaring 8 GB", gzip.compress(declared(8 << 30))),
             (f"a .tar.gz expanding to 3 x {gz_mb} MB", gzip.compress(make_tar({f"m{i}": bytes(gz_mb << 20)
                                                                               for i in range(3)}), 1))]
    for name, body in cases:
        check("bombs", name, lambda b=body: ((r := srv.call("POST", "/api/v1/archive", raw=b,
                                                            ctype="application/x-tar"))[0] in (400, 413), str(r[0])))
    grown = rss_mb(srv.pid)
    check("bombs", "server RSS stays under 300 MB", lambda: (grown < 300, f"{before:.0f} -> {grown:.0f} MB"))


def auth(srv: Srv, n: int) -> None:
    before = rss_mb(srv.pid)
    statuses = []
    for _ in range(n):
        with socket.create_connection(("127.0.0.1", int(srv.url.rsplit(":", 1)[1])), timeout=10) as s:
            s.sendall(b"POST /api/v1/events HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                      b"Content-Length: 62914560\r\n\r\n" + bytes(1 << 20))
            statuses.append(s.recv(64).split(b" ")[1:2])
    after = rss_mb(srv.pid)
    check("auth", f"{n} unauthenticated 60 MB POSTs refused at the headers",
          lambda: (all(s == [b"401"] for s in statuses), f"RSS {before:.0f} -> {after:.0f} MB"))


def share_and_embed(srv: Srv) -> None:
    srv.call("POST", "/api/v1/events", {"events": [line("pub"), line("pub/sekrit")]})
    made = srv.call("POST", "/api/v1/tokens", {"envs": ["pub"]})[2]

    def revoked_closes() -> tuple[bool, str]:
        return revoke_closes_socket(srv, made["token"], lambda: srv.call("DELETE", f"/api/v1/tokens/{made['id']}"))
    check("share", "revoking a token closes its websocket", revoked_closes)
    token = srv.call("POST", "/api/v1/tokens", {"envs": ["pub"]})[2]["token"]
    check("embed", "hidden and missing envs answer alike", lambda: (
        srv.call("GET", "/embed/pub/sekrit", token=token)[0] == srv.call("GET", "/embed/pub/absent", token=token)[0],
        ""))
    check("embed", "a write from the embed page is refused", lambda: (srv.call(
        "PUT", "/api/v1/envs/pub/panes/loss/layout", {"x": 0, "y": 0, "w": 6, "h": 4},
        headers={"Referer": srv.url + "/embed/pub"})[0] == 403, ""))


def slowloris(srv: Srv, n: int, deadline: float) -> None:
    port = int(srv.url.rsplit(":", 1)[1])
    socks = [socket.create_connection(("127.0.0.1", port), timeout=deadline + 10) for _ in range(n)]
    for s in socks:
        s.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n")
    t0 = time.monotonic()
    served = srv.call("GET", "/api/v1/envs")[0] == 200
    answers = [s.recv(64)[:12] for s in socks]
    took = time.monotonic() - t0
    for s in socks:
        s.close()
    check("slowloris", f"{n} half-sent requests get 408 within the deadline",
          lambda: (all(a == b"HTTP/1.1 408" for a in answers) and took < deadline + 5, f"{took:.1f} s"))
    check("slowloris", "others are served meanwhile", lambda: (served, ""))


def bigints(srv: Srv) -> None:
    big = str(2 ** 70)
    body = ('{"events": [{"op": "set", "env": "bi", "win": "o", "kind": "line", "opts": {"n": BIG}, '
            '"traces": [{"name": null, "x": [0.0], "y": [NaN]}]}]}').replace("BIG", big).encode()
    srv.call("POST", "/api/v1/events", raw=body)
    check("bigints", "reads never 500 after a huge integer beside NaN", lambda: (
        srv.call("GET", "/api/v1/envs")[0] == 200 and srv.call("GET", "/api/v1/runs")[0] == 200, ""))
    check("bigints", "a manifest whose blobs is not a list is a 4xx", lambda: (srv.call(
        "POST", "/api/v1/archive", raw=make_tar({"manifest.json": b'{"format": "paneboard-envs", "version": 1, '
                                                 b'"envs": [], "blobs": 7}'}), ctype="application/x-tar")[0] == 400, ""))


def retention(srv: Srv) -> None:
    srv.call("POST", "/api/v1/events", {"events": [line("visdom_live")]})
    dry = srv.call("POST", "/api/v1/runs/delete", {"query": 'name ~ "^visdom_live$"', "dry_run": True})[2]
    check("retention", "a live Visdom stream is never selected", lambda: (dry.get("envs") == [], str(dry.get("envs"))))
    check("retention", "a delete not matching its dry run is refused", lambda: (srv.call(
        "POST", "/api/v1/runs/delete", {"envs": ["visdom_live"], "confirm": dry.get("confirm", "")})[0] == 409, ""))


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--quick", action="store_true", help="small sizes (CI)")
    args = p.parse_args()
    n_runs, n_auth, n_slow, gz_mb, deadline = (5, 4, 8, 8, 2.0) if args.quick else (200, 24, 200, 400, 2.0)
    cap = n_slow + 8  # room for the slowloris hoard; the websocket check then fills it
    tmp = Path(tempfile.mkdtemp(prefix="pb-redteam-"))
    port = free_port()
    import subprocess

    proc = subprocess.Popen([sys.executable, "-m", "paneboard.server", "--host", "127.0.0.1", "--port", str(port),
                             "--db", str(tmp / "rt.db"), "--log-level", "warning", "--token", ADMIN,
                             "--header-deadline", str(deadline), "--max-connections-per-address", str(cap)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    srv = up(Srv(f"http://127.0.0.1:{port}", proc.pid), proc)
    try:
        for area in (lambda: queries(srv, n_runs), lambda: blobs(srv), lambda: bombs(srv, gz_mb),
                     lambda: auth(srv, n_auth), lambda: share_and_embed(srv), lambda: slowloris(srv, n_slow, deadline),
                     lambda: ws_cap(srv, cap), lambda: bigints(srv), lambda: retention(srv), lambda: imports(srv),
                     lambda: cli_revoke(srv, str(tmp / "rt.db")), lambda: ingest_round3(srv, args.quick),
                     lambda: (sparse_archive(srv, tmp / "artifacts"), share_reads(srv)),
                     lambda: None if args.quick else memory(srv),  # 64 MB frames: CI runs the 16 MB test
                     lambda: (terminal(srv), artifacts(), notifier(flood_s=2.0 if args.quick else 10.0))):
            area()
    finally:
        stop(proc)
    peers()
    failed = 0
    print(f"{'area':<11} {'tried':>5} {'held':>5} {'failed':>6}")
    for area, rows in RESULTS.items():
        bad = [r for r in rows if not r[1]]
        failed += len(bad)
        print(f"{area:<11} {len(rows):>5} {len(rows) - len(bad):>5} {len(bad):>6}")
    for area, rows in RESULTS.items():
        for name, held, note in rows:
            print(f"  {'held  ' if held else 'FAILED'} {area}: {name}" + (f" ({note})" if note else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
