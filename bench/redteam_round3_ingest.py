"""Red-team area of issue 40's third pass, ingest: floods of tiny events (/ingest, POST /api/v1/events, import
frames) with the server's RSS and another client's read time, import frames under an SDK client's id, point
runs carrying another op, a console of many ranks, and CR/LF in a download's name (run by bench/redteam.py)."""

from __future__ import annotations

import hashlib
import json
import struct
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import rss_mb  # noqa: E402
from redteam_common import ADMIN, Srv, check  # noqa: E402

from paneboard.protocol import PointRun, pack_frame  # noqa: E402

AREA = "ingest3"


def _point(s: int, env: str, x: float) -> dict:
    return {"s": s, "op": "update", "env": env, "win": "w", "kind": "line", "mode": "append",
            "traces": [{"name": "a", "x": [x], "y": [1.0]}]}


def _ws(srv: Srv, client: str):  # noqa: ANN202  (websockets' sync connection)
    from websockets.sync.client import connect

    # No keepalive pings: a server busy for minutes with an attack's frame must fail its check, not this client.
    ws = connect(srv.url.replace("http", "ws", 1) + "/ingest", open_timeout=10, max_size=None, compression=None,
                 ping_interval=None, additional_headers={"Authorization": f"Bearer {ADMIN}"}).__enter__()
    ws.send(json.dumps({"hello": {"client": client, "sdk": "redteam"}}))
    return ws, json.loads(ws.recv(timeout=30))


def _xs(srv: Srv, env: str) -> list[float]:
    status, _, body = srv.call("GET", f"/api/v1/envs/{env}/panes/w/export?format=json")
    return [x for t in body["traces"] for x in t["x"]] if status == 200 else []


def _slowest_read_during(srv: Srv, attack) -> tuple[float, object]:  # noqa: ANN001
    """Run `attack()` while another client reads the env list; (its slowest read in s, attack's result)."""
    done, slowest = threading.Event(), [0.0]

    def reader() -> None:
        while not done.is_set():
            t0 = time.monotonic()
            srv.call("GET", "/api/v1/envs")
            slowest[0] = max(slowest[0], time.monotonic() - t0)

    t = threading.Thread(target=reader, daemon=True)
    t.start()
    try:
        result = attack()
    finally:
        done.set()
        t.join(30)
    return slowest[0], result


def floods(srv: Srv, n_tiny: int) -> None:
    """Tiny events by the million: refused whole before per-event work, RSS bounded, other reads quick."""
    base = rss_mb(srv.pid)
    tiny = '{"batch":[' + ",".join(["{}"] * n_tiny) + "]}"

    def ingest_flood() -> tuple[dict, float]:
        ws, _ = _ws(srv, "rt-flood")
        t0 = time.monotonic()
        try:
            ws.send(tiny)
            reply = json.loads(ws.recv(timeout=300))
        except Exception as exc:  # a server that dies or gives up on the frame fails the check below
            reply = {"failed": f"{type(exc).__name__}: {exc}"}
        finally:
            ws.close()
        return reply, time.monotonic() - t0
    slow, (reply, took) = _slowest_read_during(srv, ingest_flood)  # type: ignore[misc]
    grown = rss_mb(srv.pid) - base
    check(AREA, f"/ingest frame of {n_tiny:,} {{}} refused whole", lambda: (
        "error" in reply and grown < 300 and slow < 1.0,
        f"{len(tiny) / 1e6:.1f} MB in {took:.2f} s, RSS +{grown:.0f} MB, slowest other read {slow * 1000:.0f} ms"))

    body = ('{"events":[' + ",".join(["{}"] * n_tiny) + "]}").encode()
    slow, (status, _, _) = _slowest_read_during(srv, lambda: srv.call("POST", "/api/v1/events", raw=body))
    grown = rss_mb(srv.pid) - base
    check(AREA, f"POST /api/v1/events of {n_tiny:,} {{}} refused", lambda: (
        status == 413 and grown < 300 and slow < 1.0, f"{status}, RSS +{grown:.0f} MB, slowest read {slow * 1000:.0f} ms"))

    declared = struct.pack("<4sI", b"PBF1", 2_000_000) + struct.pack("<BI", 0, 2) * (n_tiny // 2)
    status = srv.call("POST", "/api/v1/import/frames?client=import-rt", raw=declared,
                      ctype="application/octet-stream")[0]
    grown = rss_mb(srv.pid) - base
    check(AREA, "import frame declaring 2,000,000 events refused", lambda: (
        status == 400 and grown < 300, f"{status}, {len(declared) / 1e6:.1f} MB body, RSS +{grown:.0f} MB"))

    def at_the_limit() -> tuple[bool, str]:
        ws, _ = _ws(srv, "rt-alike")
        try:
            t0 = time.monotonic()
            ws.send('{"batch":[' + ",".join(json.dumps({"s": k}) for k in range(1, 10_001)) + "]}")
            ack = ws.recv(timeout=120)
            took = time.monotonic() - t0
        finally:
            ws.close()
        return len(ack) < 200_000 and json.loads(ack).get("ack") == 10_000, f"ack {len(ack) / 1e3:.0f} KB, {took:.2f} s"
    check(AREA, "10,000 alike rejections answer a small ack", at_the_limit)


def identities(srv: Srv) -> None:
    """An import frame under a live SDK client's id, and an SDK hello under an importer's id."""
    def shared() -> tuple[bool, str]:
        ws, _ = _ws(srv, "rt-live-sdk")
        try:
            ws.send(json.dumps({"batch": [_point(1, "rt_shared", 1.0)]}))
            ws.recv(timeout=30)
            status = srv.call("POST", "/api/v1/import/frames?client=rt-live-sdk",
                              raw=pack_frame([json.dumps(_point(1000, "rt_shared", 9.0)).encode()]),
                              ctype="application/octet-stream")[0]
            ws.send(json.dumps({"batch": [_point(2, "rt_shared", 2.0)]}))
            ws.recv(timeout=30)
        finally:
            ws.close()
        xs = _xs(srv, "rt_shared")
        return xs == [1.0, 2.0], f"import frame {status}, stored x {xs}"
    check(AREA, "an import frame cannot take an SDK client's sequence", shared)

    def hello() -> tuple[bool, str]:
        ws, answer = _ws(srv, "import-0123")
        ws.close()
        return "error" in answer, str(answer)[:80]
    check(AREA, "an SDK hello cannot take an importer's id", hello)


def point_runs(srv: Srv) -> None:
    srv.call("POST", "/api/v1/events", {"events": [_point(1, "rt_keep", 1.0)]})
    run = PointRun(1, 1, 1.0, json.dumps({"op": "delete_env", "env": "rt_keep", "traces": [{"name": "a"}]}).encode(),
                   struct.pack("<3d", 5.0, 5.0, 1.7e9))
    status = srv.call("POST", "/api/v1/import/frames?client=import-rt-run", raw=pack_frame([run]),
                      ctype="application/octet-stream")[0]
    check(AREA, "a point run carrying delete_env is not applied", lambda: (
        srv.call("GET", "/api/v1/envs/rt_keep")[0] == 200, f"frame {status}"))


def console_ranks(srv: Srv, n_ranks: int) -> None:
    for k in range(0, n_ranks, 10_000):
        srv.call("POST", "/api/v1/events", {"events": [
            {"op": "console", "env": "rt_ranks", "rank": r, "lines": [[1, 1.0, "stdout", "x"]]}
            for r in range(k, min(k + 10_000, n_ranks))]})

    def bounded() -> tuple[bool, str]:  # called by check(): a header too long for http.client is a failure
        status, headers, _ = srv.call("GET", "/api/v1/envs/rt_ranks/console?rank=0")
        size = len(headers.get("X-Console-Ranks") or "")
        return status == 200 and size < 8192, f"{status}, {size} bytes, total {headers.get('X-Console-Ranks-Total')}"
    check(AREA, f"X-Console-Ranks of {n_ranks:,} ranks is bounded", bounded)


def header_params(srv: Srv) -> None:
    data = b"redteam artifact"
    sha = hashlib.sha256(data).hexdigest()
    srv.call("PUT", f"/api/v1/artifact-blobs/{sha}/upload?offset=0&last=1", raw=data, ctype="application/octet-stream")
    status, headers, _ = srv.call("GET", f"/api/v1/artifact-blobs/{sha}?name=a%0D%0ASet-Cookie:%20x=1")
    check(AREA, "CR/LF in a blob download's ?name= is a 400", lambda: (
        status == 400 and "Set-Cookie" not in headers, str(status)))


def ingest_round3(srv: Srv, quick: bool) -> None:
    floods(srv, 200_000 if quick else 1_000_000)
    identities(srv)
    point_runs(srv)
    console_ranks(srv, 3_000 if quick else 30_000)
    header_params(srv)
