"""Connections under load: 64 producers connect at once while 16 writers ingest at the ceiling.

Starts its own dash-server (temp SQLite file), runs bench/soak.py's writers (own processes, real SDK) and, a few
seconds in, opens `--connects` /ingest websockets at once from threads of this process: each one's accept +
hello -> welcome time (what the SDK's handshake waits for, 10 s at most) and its first batch -> ack time.

    python bench/connect_storm.py [--connects 64] [--writers 16] [--rate 10000] [--seconds 15]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
import soak  # noqa: E402
from common import free_port, start_server, stop  # noqa: E402


def connect_one(port: int, k: int, out: list) -> None:
    from websockets.sync.client import connect

    t0 = time.perf_counter()
    try:
        with connect(f"ws://127.0.0.1:{port}/ingest", open_timeout=30, compression=None) as ws:
            ws.send(json.dumps({"hello": {"client": f"storm{k}", "sdk": "bench"}}))
            json.loads(ws.recv(timeout=30))["welcome"]
            t1 = time.perf_counter()
            ev = {"s": 1, "t": time.time(), "op": "update", "env": "storm", "win": f"c{k}", "kind": "line",
                  "mode": "append", "name": None, "opts": {}, "traces": [{"x": [0.0], "y": [1.0]}]}
            ws.send(json.dumps({"batch": [ev]}))
            assert json.loads(ws.recv(timeout=60))["ack"] == 1
            out.append((t1 - t0, time.perf_counter() - t1, None))
    except Exception as exc:  # a timeout is the figure this bench exists to catch
        out.append((time.perf_counter() - t0, None, repr(exc)))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--connects", type=int, default=64)
    ap.add_argument("--writers", type=int, default=16)
    ap.add_argument("--rate", type=float, default=10_000)
    ap.add_argument("--seconds", type=float, default=15)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        port = free_port()
        proc = start_server(Path(tmp) / "storm.db", port)
        load: dict = {}
        try:
            bg = threading.Thread(target=lambda: load.update(soak.run_soak(
                port, proc.pid, args.writers, args.rate, args.seconds, 1, env="storm_load")))
            bg.start()
            time.sleep(min(5.0, args.seconds / 3))  # the writers are up and streaming
            results: list = []
            threads = [threading.Thread(target=connect_one, args=(port, k, results)) for k in range(args.connects)]
            for t in threads:
                t.start()
            for t in threads:
                t.join(120)
            bg.join()
        finally:
            stop(proc)
    hs = np.array([r[0] for r in results if r[2] is None]) * 1e3
    acks = np.array([r[1] for r in results if r[2] is None]) * 1e3
    failed = [r[2] for r in results if r[2] is not None]
    print(f"{args.connects} connects during {args.writers} writers x {args.rate:,.0f} ev/s "
          f"({load.get('committed_per_s', 0):,.0f} points/s committed, lost {load.get('lost')}, "
          f"duplicated {load.get('duplicated')}, SDK drops {load.get('dropped')})")
    if len(hs):
        print(f"accept + hello -> welcome: p50 {np.percentile(hs, 50):.0f} ms, p99 {np.percentile(hs, 99):.0f} ms, "
              f"max {hs.max():.0f} ms; first batch -> ack: p50 {np.percentile(acks, 50):.0f} ms, "
              f"p99 {np.percentile(acks, 99):.0f} ms")
    print(f"failed handshakes: {len(failed)} {failed[:3]}")


if __name__ == "__main__":
    main()
