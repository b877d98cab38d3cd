"""Soak: N writer processes and M live subscribers against one dash-server; prints rate, errors, RSS, loss.

    python bench/soak.py [--writers 16] [--subscribers 8] [--seconds 600] [--rate 1000]

Each writer is its own process with the real SDK, appending single points at `--rate` events/s; subscribers
follow the env over /ws like the browser does. At the end every pane is exported and compared with what was
logged: lost and duplicated events must both be 0.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import queue
import sys
import tempfile
import threading
import time
import urllib.request
from collections import deque
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from common import cpu_seconds, free_port, rss_mb, start_server, stop  # noqa: E402

ACK_SAMPLE = 50  # every 50th call is timed from the call to the ack that covers it


def _time_acks(transport, samples: deque, lat: list[float]) -> None:
    """Bench-only instrumentation: the SDK exposes no ack timing, so wrap its ack handler on this instance."""
    orig = transport.sender.on_message

    def on_message(msg):
        orig(msg)
        now = time.perf_counter()
        try:
            acked = int(json.loads(msg)["ack"])
        except (ValueError, KeyError, TypeError):
            return
        while samples and samples[0][0] <= acked:
            lat.append(now - samples.popleft()[1])

    transport.sender.on_message = on_message  # the ack reader looks it up on the instance per frame


def writer(port: int, k: int, rate: float, seconds: float, out: mp.Queue, env: str = "soak") -> None:
    import paneboard

    client = paneboard.Client(server="http://127.0.0.1", port=port, env=env, spool_dir=False)
    tr = client.transport
    samples: deque = deque()
    lat: list[float] = []
    timed = hasattr(tr, "sender") and hasattr(tr, "outbox")
    if timed:
        _time_acks(tr, samples, lat)
    wall0 = time.time()  # wall clock: comparable across the writer processes
    n, t0 = 0, time.perf_counter()
    while (now := time.perf_counter()) - t0 < seconds:
        due = int((now - t0) * rate)
        while n < due:
            client.line(X=[n], Y=[float(k)], win=f"w{k}", update="append")
            if timed and n % ACK_SAMPLE == 0:
                samples.append((tr.outbox.seq, time.perf_counter()))
            n += 1
        time.sleep(0.005)
    sent_s = time.perf_counter() - t0
    ok = client.flush(timeout=120)
    wall1 = time.time()
    client.close_connection(timeout=10)
    out.put((k, n, ok, {"sent_s": sent_s, "wall0": wall0, "wall1": wall1, "dropped": int(getattr(tr, "dropped", 0)),
                        "ack_ms": [x * 1e3 for x in lat] if timed else None}))


def subscriber(port: int, stop_ev: threading.Event, counts: list[int], idx: int, env: str = "soak") -> None:
    from websockets.exceptions import ConnectionClosed
    from websockets.sync.client import connect

    with connect(f"ws://127.0.0.1:{port}/ws", open_timeout=10, compression=None) as ws:
        ws.send(json.dumps({"subscribe": env}))
        while not stop_ev.is_set():
            try:
                frame = ws.recv(timeout=1)
            except TimeoutError:
                continue
            except ConnectionClosed:
                return
            for msg in json.loads(frame):
                if msg["type"] == "extend":
                    counts[idx] += sum(len(t["x"]) for t in msg["traces"])


def run_soak(port: int | list[int], pid: int | list[int], writers: int, rate: float, seconds: float,
             subscribers: int, env: str = "soak") -> dict:
    """Writers (own processes) and subscribers against the server at port/pid; checks every pane at the end.

    With lists of ports and pids (several servers on one database), writer k uses ports[k % len(ports)],
    subscribers follow the first server and the server CPU is summed over the pids."""
    ports = port if isinstance(port, list) else [port]
    pids = pid if isinstance(pid, list) else [pid]
    port = ports[0]
    stop_ev = threading.Event()
    counts = [0] * subscribers
    subs = [threading.Thread(target=subscriber, args=(port, stop_ev, counts, i, env), daemon=True)
            for i in range(subscribers)]
    for t in subs:
        t.start()
    ctx = mp.get_context("spawn")  # no fork of a process that already runs threads
    out = ctx.Queue()
    procs = [ctx.Process(target=writer, args=(ports[k % len(ports)], k, rate, seconds, out, env))
             for k in range(writers)]
    t0, cpu0 = time.perf_counter(), sum(map(cpu_seconds, pids))
    for p in procs:
        p.start()
    samples, results = [], []
    next_sample = 0.0
    while len(results) < len(procs):  # drain the queue before joining (a child blocks until it is read)
        if time.perf_counter() - t0 >= next_sample:
            samples.append((time.perf_counter() - t0, sum(map(rss_mb, pids))))
            next_sample += min(10.0, seconds / 10)
        try:
            results.append(out.get(timeout=0.5))
        except queue.Empty:
            if not any(p.is_alive() for p in procs) and out.empty():
                break
    results.sort(key=lambda r: r[0])
    for p in procs:
        p.join(10)
    elapsed, server_cpu = time.perf_counter() - t0, sum(map(cpu_seconds, pids)) - cpu0
    time.sleep(1.0)  # the last extends of the final flush are still on their way to the subscribers
    stop_ev.set()
    for t in subs:
        t.join(5)
    lost = dup = stored = 0
    for k, n, *_ in results:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/v1/envs/{env}/panes/w{k}/export?format=json",
                                    timeout=300) as r:
            xs = json.loads(r.read())["traces"][0]["x"]
        stored += len(xs)
        seen = set(xs)
        lost += len(set(range(n)) - seen)
        dup += len(xs) - len(seen)
    total = sum(n for _, n, *_ in results)
    acks = [a for *_, st in results for a in (st["ack_ms"] or ())]
    sent_s = max((st["sent_s"] for *_, st in results), default=0.0)
    # From the first writer's first call to the last writer's final ack (process start-up excluded).
    span = max((st["wall1"] for *_, st in results), default=0.0) - min((st["wall0"] for *_, st in results),
                                                                          default=0.0)
    return {"writers": writers, "rate_per_writer": rate, "seconds": seconds, "subscribers": subscribers,
            "events": total, "stored": stored, "offered_per_s": total / sent_s if sent_s else None,
            "committed_per_s": stored / span if span > 0 else None, "elapsed_s": elapsed, "span_s": span,
            "all_acked": all(ok for _, _, ok, _ in results), "writers_reported": len(results),
            "lost": lost, "duplicated": dup, "dropped": sum(st["dropped"] for *_, st in results),
            # The SDK drops the oldest events by design when its buffer is full (reported as drops); an error is
            # a point neither stored nor dropped, a duplicate, or a writer that never reported.
            "errors": max(0, lost - sum(st["dropped"] for *_, st in results)) + dup + (writers - len(results)),
            "server_cpu_s": server_cpu, "server_cpu_us_per_point": 1e6 * server_cpu / stored if stored else None,
            "ack_p50_ms": float(np.percentile(acks, 50)) if acks else None,
            "ack_p99_ms": float(np.percentile(acks, 99)) if acks else None,
            "subscriber_points_min": min(counts, default=0), "subscriber_points_max": max(counts, default=0),
            "rss_mb": samples}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--writers", type=int, default=16)
    ap.add_argument("--subscribers", type=int, default=8)
    ap.add_argument("--seconds", type=float, default=600)
    ap.add_argument("--rate", type=float, default=1000, help="events/s per writer")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        port = free_port()
        proc = start_server(Path(tmp) / "soak.db", port)
        try:
            r = run_soak(port, proc.pid, args.writers, args.rate, args.seconds, args.subscribers)
        finally:
            stop(proc)
    print(f"writers {args.writers} x {args.rate:,.0f} ev/s for {args.seconds:.0f} s, subscribers {args.subscribers}")
    print(f"events logged {r['events']:,} ({r['committed_per_s']:,.0f}/s stored over {r['span_s']:.0f} s incl. "
          f"final flush); all acked: {r['all_acked']}; ack latency p50 {r['ack_p50_ms']} ms, p99 {r['ack_p99_ms']} ms")
    print(f"dash-server CPU {r['server_cpu_s']:.1f} s ({r['server_cpu_us_per_point']:.2f} us per stored point; "
          f"utime+stime from /proc, writers' start-up to their last ack); SDK drops {r['dropped']:,}")
    print(f"lost {r['lost']}, duplicated {r['duplicated']}; points seen per subscriber: "
          f"min {r['subscriber_points_min']:,} max {r['subscriber_points_max']:,}")
    print("server RSS MB over time: " + ", ".join(f"{t:.0f}s {m:.0f}" for t, m in r["rss_mb"]))


if __name__ == "__main__":
    main()
