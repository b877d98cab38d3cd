"""Peak RSS of dash-server for huge payloads: exporting one huge line pane (JSON, CSV), and taking one in a POST.

    python bench/export_memory.py [--points 20000000]

The pane is written through the store directly (fast), then a dash-server subprocess serves the exports;
its peak RSS (VmHWM) is read after each download and printed with the download's size and time. Then a fresh
server takes the same number of points as one POST /api/v1/events (a y-only line, `0,` per point).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402

from paneboard.server.store import SqlStore  # noqa: E402
from paneboard.server.store.schema import ensure_schema  # noqa: E402


def build(db: Path, points: int) -> None:
    url = f"sqlite:///{db}"
    ensure_schema(url, str(db))
    store = SqlStore(url)
    step = 1_000_000
    with store.transaction() as tx:
        pane = tx.put_pane("big", "w", "line", "big", {}, None)
        trace = tx.add_trace(pane, "loss", {})
    for start in range(0, points, step):
        x = np.arange(start, min(points, start + step), dtype=np.float64)
        with store.transaction() as tx:
            tx.append_points(trace, x, np.sin(x / 1000), np.full(len(x), 1.7e9))
    store.close()


def peak_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--points", type=int, default=20_000_000)
    args = p.parse_args()
    tmp = common.temp_dir("export")
    t0 = time.perf_counter()
    build(tmp / "big.db", args.points)
    print(f"built a {args.points:,}-point pane in {time.perf_counter() - t0:.0f} s")
    port = common.free_port()
    proc = subprocess.Popen([sys.executable, "-m", "paneboard.server", "--port", str(port), "--db",
                             str(tmp / "big.db"), "--log-level", "warning"])
    try:
        common.wait_up(proc, f"http://127.0.0.1:{port}/api/v1/envs", "dash-server")
        print(f"dash-server idle: peak RSS {peak_mb(proc.pid):.0f} MB")
        for fmt in ("json", "csv"):
            t0 = time.perf_counter()
            size = 0
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/v1/envs/big/panes/w/export?format={fmt}",
                                        timeout=3600) as r:
                while chunk := r.read(1 << 20):
                    size += len(chunk)
            print(f"export {fmt}: {size / 1e6:,.0f} MB in {time.perf_counter() - t0:.1f} s, "
                  f"server peak RSS so far {peak_mb(proc.pid):.0f} MB")
    finally:
        common.stop(proc)
    post(tmp, args.points)
    return 0


def post(tmp: Path, points: int) -> None:
    body = b'{"events":[{"op":"set","kind":"line","env":"post","win":"w","traces":[{"y":[' \
        + b",".join([b"0"] * points) + b"]}]}]}"
    port = common.free_port()
    proc = subprocess.Popen([sys.executable, "-m", "paneboard.server", "--port", str(port), "--db",
                             str(tmp / "post.db"), "--log-level", "warning",
                             "--max-request-mb", str(len(body) // (1 << 20) + 8)])
    try:
        common.wait_up(proc, f"http://127.0.0.1:{port}/api/v1/envs", "dash-server")
        t0 = time.perf_counter()
        req = urllib.request.Request(f"http://127.0.0.1:{port}/api/v1/events", data=body, method="POST",
                                     headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=3600) as r:
            r.read()
        print(f"POST of {points:,} points ({len(body) / 1e6:,.0f} MB): {time.perf_counter() - t0:.1f} s, "
              f"server peak RSS {peak_mb(proc.pid):.0f} MB")
    finally:
        common.stop(proc)


if __name__ == "__main__":
    sys.exit(main())
