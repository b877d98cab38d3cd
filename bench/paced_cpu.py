"""What a paced stream costs dash-server: process CPU seconds per wall second, and live latency to a /ws socket.

A training script that logs a few scalars every step sends a steady trickle of single-point appends; at such
rates each event used to travel in its own frame, transaction, commit, ack and publish. This bench starts its
own dash-server (temp SQLite file), streams at a fixed rate from one SDK client and prints:

- dash-server CPU as % of one core (utime + stime from /proc, the whole process) over the paced window, with
  no /ws subscriber (the figure that matters for a headless server) and with one (the live latency run);
- live latency: the SDK call -> the `extend` message carrying that point on a subscribed /ws socket, p50/p99;
- the idle server's CPU, measured the same way before the streams, for reference.

    python bench/paced_cpu.py [--seconds 20] [--quick]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np

import paneboard

sys.path.insert(0, str(Path(__file__).parent))
from common import cpu_seconds, free_port, start_server, stop  # noqa: E402


class Subscriber:
    """A /ws socket subscribed to one env (the browser's protocol) that notes when each point arrives."""

    def __init__(self, port: int, env: str, panes: int, n_per_pane: int) -> None:
        from websockets.sync.client import connect

        self.arrived = np.full((panes, n_per_pane), np.nan)
        self.ws = connect(f"ws://127.0.0.1:{port}/ws", open_timeout=10, compression=None).__enter__()
        self.ws.send(json.dumps({"subscribe": env}))
        while not any(m.get("type") == "subscribed" for m in json.loads(self.ws.recv(timeout=10))):
            pass
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self) -> None:
        arrived = self.arrived
        while True:
            try:
                frame = self.ws.recv(timeout=10)
            except Exception:
                return
            now = time.perf_counter()
            for msg in json.loads(frame):
                if msg.get("type") != "extend":
                    continue
                pane = int(msg["win"][1:])
                for x in msg["traces"][0]["x"]:
                    if 0 <= x < arrived.shape[1]:
                        arrived[pane, int(x)] = now

    def close(self) -> None:
        self.ws.close()
        self.thread.join(timeout=5)


def stream(port: int, pid: int, env: str, panes: int, rate: float, seconds: float, live: bool) -> dict:
    """`rate` single-point appends per second, spread evenly and round-robin over `panes` panes."""
    client = paneboard.Client(server="http://127.0.0.1", port=port, env=env)
    for p in range(panes):
        client.line(X=[-1], Y=[0.0], win=f"w{p}")
    client.flush(timeout=30)
    n = int(rate * seconds)
    per_pane = -(-n // panes)
    sub = Subscriber(port, env, panes, per_pane) if live else None
    sent = np.full((panes, per_pane), np.nan)
    time.sleep(0.5)  # let the set-up's commits and env summaries settle out of the measured window
    c0, t0 = cpu_seconds(pid), time.perf_counter()
    for i in range(n):
        delay = t0 + i / rate - time.perf_counter()
        if delay > 0:
            time.sleep(delay)  # never spin: a spinning caller starves the SDK's threads of the GIL
        p, k = i % panes, i // panes
        sent[p, k] = time.perf_counter()
        client.line(X=[k], Y=[float(i)], win=f"w{p}", update="append")
    ok = client.flush(timeout=60)
    wall, cpu = time.perf_counter() - t0, cpu_seconds(pid) - c0
    client.close_connection(timeout=10)
    out = {"panes": panes, "rate_per_s": rate, "events": n, "seconds": wall, "server_cpu_s": cpu,
           "server_cpu_pct": 100 * cpu / wall, "server_cpu_us_per_event": 1e6 * cpu / n, "all_acked": ok}
    if sub is not None:
        time.sleep(0.3)
        sub.close()
        lat = (sub.arrived - sent)[~np.isnan(sub.arrived) & ~np.isnan(sent)] * 1e3
        out.update(received=int(len(lat)), p50_ms=float(np.percentile(lat, 50)) if len(lat) else None,
                   p99_ms=float(np.percentile(lat, 99)) if len(lat) else None)
    return out


def idle_cpu(pid: int, seconds: float) -> float:
    c0, t0 = cpu_seconds(pid), time.perf_counter()
    time.sleep(seconds)
    return 100 * (cpu_seconds(pid) - c0) / (time.perf_counter() - t0)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seconds", type=float, default=20.0, help="length of each paced stream (default 20)")
    ap.add_argument("--quick", action="store_true", help="5 s streams (smoke run)")
    args = ap.parse_args()
    secs = 5.0 if args.quick else args.seconds
    cases = [(10, 500.0), (10, 10.0)]  # 10 panes x 50 appends/s; 10 panes x 1 append/s
    results: dict = {"seconds": secs, "cpus": os.cpu_count(), "load_before": os.getloadavg()}
    with tempfile.TemporaryDirectory() as tmp:
        port = free_port()
        proc = start_server(Path(tmp) / "bench.db", port)
        try:
            time.sleep(1.0)
            results["idle_cpu_pct"] = idle_cpu(proc.pid, min(secs, 10.0))
            results["headless"] = [stream(port, proc.pid, f"paced_{int(r)}", p, r, secs, live=False) for p, r in cases]
            results["live"] = [stream(port, proc.pid, f"live_{int(r)}", p, r, secs, live=True) for p, r in cases]
        finally:
            stop(proc)
    results["load_after"] = os.getloadavg()
    print(f"machine: {results['cpus']} cpus, load {results['load_before'][0]:.2f} -> {results['load_after'][0]:.2f} "
          f"(1 min); dash-server CPU = utime+stime from /proc over each stream's wall time")
    print(f"idle dash-server: {results['idle_cpu_pct']:.2f}% of a core")
    for h, lv in zip(results["headless"], results["live"], strict=True):
        print(f"{h['panes']} panes, {h['rate_per_s']:,.0f} appends/s for {secs:.0f} s: dash-server "
              f"{h['server_cpu_pct']:.2f}% of a core headless ({h['server_cpu_us_per_event']:.0f} us/event), "
              f"{lv['server_cpu_pct']:.2f}% with a /ws subscriber; live latency p50 {lv['p50_ms']:.1f} ms, "
              f"p99 {lv['p99_ms']:.1f} ms ({lv['received']}/{lv['events']} received; all acked: "
              f"{h['all_acked'] and lv['all_acked']})")
    print(json.dumps(results))


if __name__ == "__main__":
    main()
