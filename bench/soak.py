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
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from ingest import free_port, start_server  # noqa: E402


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def writer(port: int, k: int, rate: float, seconds: float, out: mp.Queue) -> None:
    import paneboard

    client = paneboard.Client(server="http://127.0.0.1", port=port, env="soak", spool_dir=False)
    n, t0 = 0, time.perf_counter()
    while (now := time.perf_counter()) - t0 < seconds:
        due = int((now - t0) * rate)
        while n < due:
            client.line(X=[n], Y=[float(k)], win=f"w{k}", update="append")
            n += 1
        time.sleep(0.005)
    ok = client.flush(timeout=120)
    client.close_connection(timeout=10)
    out.put((k, n, ok))


def subscriber(port: int, stop: threading.Event, counts: list[int], idx: int) -> None:
    from websockets.exceptions import ConnectionClosed
    from websockets.sync.client import connect

    with connect(f"ws://127.0.0.1:{port}/ws", open_timeout=10, compression=None) as ws:
        ws.send(json.dumps({"subscribe": "soak"}))
        while not stop.is_set():
            try:
                frame = ws.recv(timeout=1)
            except TimeoutError:
                continue
            except ConnectionClosed:
                return
            for msg in json.loads(frame):
                if msg["type"] == "extend":
                    counts[idx] += sum(len(t["x"]) for t in msg["traces"])


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
        stop = threading.Event()
        counts = [0] * args.subscribers
        subs = [threading.Thread(target=subscriber, args=(port, stop, counts, i), daemon=True)
                for i in range(args.subscribers)]
        for t in subs:
            t.start()
        ctx = mp.get_context("spawn")  # no fork of a process that already runs threads
        out = ctx.Queue()
        procs = [ctx.Process(target=writer, args=(port, k, args.rate, args.seconds, out))
                 for k in range(args.writers)]
        t0 = time.perf_counter()
        for p in procs:
            p.start()
        samples, results = [], []
        next_sample = 0.0
        while len(results) < len(procs):  # drain the queue before joining (a child blocks until it is read)
            if time.perf_counter() - t0 >= next_sample:
                samples.append((time.perf_counter() - t0, rss_mb(proc.pid)))
                next_sample += min(10.0, args.seconds / 10)
            try:
                results.append(out.get(timeout=0.5))
            except queue.Empty:
                if not any(p.is_alive() for p in procs) and out.empty():
                    break
        results.sort()
        for p in procs:
            p.join(10)
        elapsed = time.perf_counter() - t0
        time.sleep(1.0)  # the last extends of the final flush are still on their way to the subscribers
        stop.set()
        for t in subs:
            t.join(5)
        lost = dup = 0
        for k, n, _ in results:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/v1/envs/soak/panes/w{k}/export?format=json",
                                        timeout=120) as r:
                xs = json.loads(r.read())["traces"][0]["x"]
            lost += len(set(range(n)) - set(xs))
            dup += len(xs) - len(set(xs))
        proc.terminate()
        proc.wait(30)
    total = sum(n for _, n, _ in results)
    print(f"writers {args.writers} x {args.rate:,.0f} ev/s for {args.seconds:.0f} s, subscribers {args.subscribers}")
    print(f"events logged {total:,} ({total / elapsed:,.0f}/s over {elapsed:.0f} s incl. final flush); "
          f"all acked: {all(ok for *_, ok in results)}")
    print(f"lost {lost}, duplicated {dup}; points seen per subscriber: min {min(counts):,} max {max(counts):,}")
    print("server RSS MB over time: " + ", ".join(f"{t:.0f}s {m:.0f}" for t, m in samples))


if __name__ == "__main__":
    main()
