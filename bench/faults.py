"""Fault injection against real dash-server processes: prints lost and duplicated points per scenario.

    python bench/faults.py [--outage 60] [--rate 2000] [--only NAME[,NAME]] [--no-postgres]

Every scenario logs points with known x values through the real SDK (or raw frames for poison events), makes
the fault happen, and then reads everything back through the export API: lost = expected x values missing,
duplicated = x values stored more than once. Every figure should be 0. Loopback only.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))  # the tests' throwaway PostgreSQL

import common  # noqa: E402

import paneboard  # noqa: E402


class Server:
    """One dash-server process on a fixed port and database, restartable."""

    def __init__(self, db: str, port: int | None = None, log: Path | None = None) -> None:
        self.db, self.port = db, port or common.free_port()
        self.log = log
        self.proc: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> Server:
        out = open(self.log, "ab") if self.log else subprocess.DEVNULL
        self.proc = subprocess.Popen([sys.executable, "-m", "paneboard.server", "--host", "127.0.0.1", "--port",
                                      str(self.port), "--db", self.db, "--log-level", "warning"],
                                     stdout=out, stderr=subprocess.STDOUT)
        common.wait_up(self.proc, self.url + "/api/v1/envs", "dash-server")
        return self

    def stop(self, sig: int = signal.SIGTERM) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(sig)
            self.proc.wait(30)

    def xs(self, env: str, win: str) -> list[float]:
        _, body = common.timed_get(f"{self.url}/api/v1/envs/{env}/panes/{win}/export?format=json")
        return [x for t in json.loads(body)["traces"] for x in t["x"]]


def tally(expected: range | list[int], stored: list[float]) -> dict[str, int]:
    counts = collections.Counter(int(x) for x in stored)
    return {"logged": len(expected), "lost": sum(1 for x in expected if counts[x] == 0),
            "duplicated": sum(n - 1 for n in counts.values() if n > 1)}


def client(srv: Server, env: str, **kw: Any) -> paneboard.Client:
    return paneboard.Client(server="http://127.0.0.1", port=srv.port, env=env, **kw)


def outage(tmp: Path, args: argparse.Namespace, sig: int) -> dict[str, Any]:
    """Steady appends; the server is stopped (kill -9 or TERM) for --outage seconds mid-run, then restarted."""
    srv = Server(str(tmp / "outage.db")).start()
    c = client(srv, "outage", max_queue=2000, spool_dir=tmp / "spool")
    total = int(args.rate * (args.outage + 4))

    def chaos() -> None:
        time.sleep(2)
        srv.stop(sig)
        time.sleep(args.outage)
        srv.start()

    t = threading.Thread(target=chaos)
    t.start()
    common.paced(total, args.rate, lambda i: c.line(X=[i], Y=[i], win="w", update="append"))
    t.join()
    flushed = c.flush(timeout=300)
    c.close_connection(timeout=10)
    # Frames that carried the appends: runs of them travel as coalesced events (many calls per frame).
    out = {**tally(range(total), srv.xs("outage", "w")), "flush": flushed, "sdk_dropped": c.transport.dropped,
           "frames": c.transport.sender.frames_sent}
    srv.stop()
    return out


SPOOL_JOB = """
import sys, paneboard
port, n, spool = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
c = paneboard.Client(server="http://127.0.0.1", port=port, env="synced", exit_timeout=1, spool_dir=spool)
for i in range(n):
    c.line(X=[i], Y=[i], win="w", update="append")
"""


def sync_killed(tmp: Path, args: argparse.Namespace) -> dict[str, Any]:
    """A job leaves a spool of --spooled events; `paneboard sync` is killed -9 mid-upload, then run again."""
    srv = Server(str(tmp / "sync.db"))
    subprocess.run([sys.executable, "-c", SPOOL_JOB, str(srv.port), str(args.spooled), str(tmp / "sp")],
                   check=True, capture_output=True, timeout=600)
    (spool,) = (tmp / "sp").glob("*.spool")
    srv.start()
    cmd = [sys.executable, "-m", "paneboard.cli", "sync", str(spool)]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    partial = 0
    while proc.poll() is None and partial == 0:  # kill it once part of the spool is stored
        partial = sum(e.get("points", 0) for e in json.loads(common.timed_get(srv.url + "/api/v1/envs")[1])["envs"])
        time.sleep(0.01)
    proc.kill()
    killed_mid_way = proc.wait() != 0
    again = subprocess.run(cmd, capture_output=True, timeout=600) if spool.exists() else None
    out = {**tally(range(args.spooled), srv.xs("synced", "w")), "killed_mid_way": killed_mid_way,
           "stored_at_kill": partial, "rerun_ok": again is None or again.returncode == 0,
           "spool_left": spool.exists()}
    srv.stop()
    return out


def two_servers(db_url: str, name: str, writers: int, n: int) -> dict[str, Any]:
    """Several writers append to ONE trace, alternating between two servers on the same database."""
    a, b = Server(db_url).start(), Server(db_url).start()
    errors: list[str] = []

    def writer(k: int) -> None:
        cs = [client(a, name, spool_dir=False), client(b, name, spool_dir=False)]
        for i in range(n):
            cs[(i // 100) % 2].line(X=[k * n + i], Y=[i], win="w", update="append")
        for c in cs:
            if not c.flush(timeout=300):
                errors.append(f"writer {k}: flush False")
            c.close_connection(timeout=10)

    threads = [threading.Thread(target=writer, args=(k,)) for k in range(writers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    out = {**tally(range(writers * n), a.xs(name, "w")), "flush_failures": len(errors)}
    a.stop()
    b.stop()
    return out


def second_sqlite_server(tmp: Path, args: argparse.Namespace) -> dict[str, Any]:
    """A second dash-server on the same SQLite file must refuse to start."""
    db = str(tmp / "one.db")
    first = Server(db).start()
    second = subprocess.run([sys.executable, "-m", "paneboard.server", "--port", str(common.free_port()), "--db", db],
                            capture_output=True, text=True, timeout=60)
    first.stop()
    return {"second_refused": second.returncode != 0, "message": (second.stderr or second.stdout).strip()[-120:]}


def poison(tmp: Path, args: argparse.Namespace) -> dict[str, Any]:
    """Each poison event in a batch between good ones, over one raw /ingest socket; then 1,000 more points."""
    from websockets.sync.client import connect

    srv = Server(str(tmp / "poison.db")).start()
    poisons: list[bytes] = [
        b'{"op":"set","kind":"image","env":"p","win":"img","image":{"data":"' + _bomb_png() + b'"}}',
        b'{"op":"update","kind":"line","env":"p","win":"w","mode":"append","traces":[{"x":[1],"y":['
        + b"1" * 400 + b"]}]}",
        b'{"op":"set","env":"p","win":"deep","kind":"text","content":' + b"[" * 5000 + b"]" * 5000 + b"}",
        b'{"op":"set","kind":"media","env":"p","win":"a","records":[{"step":0,"type":"audio","data":"","mime":7}]}',
        b'{"op":"set","kind":"text","env":"p","win":"\\ud800","content":"x"}',
    ]
    good_x: list[int] = []
    seq = 0
    with connect(f"ws://127.0.0.1:{srv.port}/ingest", max_size=None) as ws:
        ws.send(json.dumps({"hello": {"client": "poison-bench"}}))
        json.loads(ws.recv(10))
        for k, bad in enumerate(poisons):
            items = []
            for x in (2 * k + 1000, None, 2 * k + 1001):
                seq += 1
                if x is None:
                    items.append(b'{"s":%d,%s' % (seq, bad[1:]))
                else:
                    good_x.append(x)
                    items.append(b'{"s":%d,"op":"update","kind":"line","env":"p","win":"w","mode":"append",'
                                 b'"traces":[{"x":[%d],"y":[0]}]}' % (seq, x))
            ws.send(b'{"batch":[' + b",".join(items) + b"]}")
            json.loads(ws.recv(30))
        batch = []
        for i in range(1000):
            seq += 1
            good_x.append(i)
            batch.append(b'{"s":%d,"op":"update","kind":"line","env":"p","win":"w","mode":"append",'
                         b'"traces":[{"x":[%d],"y":[0]}]}' % (seq, i))
        ws.send(b'{"batch":[' + b",".join(batch) + b"]}")
        reply = json.loads(ws.recv(30))
    out = {**tally(good_x, srv.xs("p", "w")), "last_ack": reply.get("ack"), "batches_sent": len(poisons) + 1}
    srv.stop()
    return out


def _bomb_png() -> bytes:
    """A valid 1x1 PNG whose header claims 13,500 x 13,500 pixels (base64): a decompression bomb's shape."""
    import base64
    import io
    import struct
    import zlib

    from PIL import Image

    buf = io.BytesIO()
    Image.new("L", (1, 1)).save(buf, "PNG")
    png = bytearray(buf.getvalue())
    ihdr = bytearray(png[12:29])  # b"IHDR" + 13 bytes of header data
    ihdr[4:12] = struct.pack(">II", 13_500, 13_500)
    png[12:29] = ihdr
    png[29:33] = struct.pack(">I", zlib.crc32(bytes(ihdr)))
    return base64.b64encode(bytes(png))


def disk_full(tmp: Path, args: argparse.Namespace) -> dict[str, Any]:
    """The database's 30 MB tmpfs fills up mid-run, then space is freed: every point must arrive exactly once
    (needs permission to mount a tmpfs; skipped otherwise)."""
    mnt = tmp / "small"
    mnt.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=30m", "tmpfs", str(mnt)], capture_output=True).returncode:
        return {"na": "cannot mount a tmpfs here"}
    try:
        srv = Server(str(mnt / "full.db"), log=tmp / "full.log").start()
        filler = mnt / "filler"
        filler.write_bytes(b"\0" * (22 << 20))  # leaves a few MB: the points below need more
        c = client(srv, "full", spool_dir=tmp / "spool")
        n, per_call = 2_000_000, 10_000
        rng = random.Random(0)
        for i in range(0, n, per_call):  # random y: chunks do not compress, so they outgrow the free space
            c.line(X=list(range(i, i + per_call)), Y=[rng.random() for _ in range(per_call)], win="w",
                   update="append")
        full_flush = c.flush(timeout=20)  # cannot all be stored: the disk is full
        acked_while_full = c.transport.outbox.acked
        filler.unlink()
        flushed = c.flush(timeout=120)
        c.close_connection(timeout=10)
        out = {**tally(range(n), srv.xs("full", "w")), "flush_while_full": full_flush,
               "acked_seq_while_full": acked_while_full, "flush_after_freeing": flushed,
               "sdk_dropped": c.transport.dropped,
               "server_log_mb": round((tmp / "full.log").stat().st_size / 1e6, 2)}
        srv.stop()
        return out
    finally:
        subprocess.run(["umount", "-l", str(mnt)], capture_output=True)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--outage", type=float, default=60.0, help="seconds the server is away in the outage scenarios")
    p.add_argument("--rate", type=float, default=2000.0, help="appends per second during the outage scenarios")
    p.add_argument("--spooled", type=int, default=200_000, help="events in the spool that sync uploads")
    p.add_argument("--writers", type=int, default=16, help="writers into one trace in the two-server scenarios")
    p.add_argument("--appends", type=int, default=20_000, help="appends per writer in the two-server scenarios")
    p.add_argument("--only", default="", help="comma-separated scenario names")
    p.add_argument("--no-postgres", action="store_true")
    args = p.parse_args()
    scenarios: dict[str, Callable[[Path, argparse.Namespace], dict[str, Any]]] = {
        "outage_kill9": lambda t, a: outage(t, a, signal.SIGKILL),
        "outage_term": lambda t, a: outage(t, a, signal.SIGTERM),
        "sync_kill9": sync_killed,
        "second_sqlite_server": second_sqlite_server,
        "poison_events": poison,
        "disk_full": disk_full,
    }
    pg = None
    if not args.no_postgres:
        try:
            from pgserver import TempPostgres

            pg = TempPostgres().start()
            scenarios["two_servers_postgresql"] = lambda t, a: two_servers(pg.new_database(), "two", a.writers,
                                                                          a.appends)
        except Exception as exc:  # no PostgreSQL binaries: say so instead of failing the run
            print(f"postgresql scenarios skipped: {exc}")
    only = {s for s in args.only.split(",") if s}
    try:
        for name, fn in scenarios.items():
            if only and name not in only:
                continue
            t0 = time.perf_counter()
            result = common.guarded(fn, common.temp_dir(name), args)
            print(f"{name:24s} {json.dumps(result)}  ({time.perf_counter() - t0:.0f} s)", flush=True)
    finally:
        if pg is not None:
            pg.stop()
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PANEBOARD_SPOOL_DIR", str(common.temp_dir("spool")))
    sys.exit(main())
