"""The same 5,000 single-point `visdom` client appends against dash-server and against the real Visdom server.

Prints calls/s, first-500 vs last-500 rates and their ratio for each server, and the dash-server/Visdom ratio:
    python bench/visdom_compat.py [--n 5000] [--no-visdom]
The Visdom server is started through run_server.main() (as `python -m visdom.server` minus its CDN downloads,
which need the internet at every start); without the visdom package installed only dash-server is measured.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import visdom

sys.path.insert(0, str(Path(__file__).parent))
import common  # noqa: E402
from common import free_port, start_server  # noqa: E402

WINDOW = 500


def start_dash(tmp: Path, port: int) -> subprocess.Popen:
    return start_server(tmp / "bench.db", port)


def start_visdom(tmp: Path, port: int) -> subprocess.Popen:
    return common.start_visdom(tmp / "visdom_env", port)


def run_loop(port: int, n: int) -> np.ndarray:
    """Seconds per call of vis.line(update='append') (the client does /win_exists + /update per call)."""
    vis = visdom.Visdom(server="http://127.0.0.1", port=port, env="bench", use_incoming_socket=False,
                        raise_exceptions=True)
    y = np.random.default_rng(0).random(n)
    times = np.empty(n)
    for i in range(n):
        t0 = time.perf_counter()
        vis.line(X=np.array([i]), Y=np.array([y[i]]), win="w", update="append")
        times[i] = time.perf_counter() - t0
    return times


def report(name: str, times: np.ndarray) -> float:
    rate = len(times) / times.sum()
    first = WINDOW / times[:WINDOW].sum()
    last = WINDOW / times[-WINDOW:].sum()
    print(f"{name:12s} {rate:8.1f} calls/s   first {WINDOW}: {first:7.1f}/s   last {WINDOW}: {last:7.1f}/s   "
          f"last/first {last / first:5.2f}   p50 {np.median(times) * 1e3:6.2f} ms   "
          f"p99 {np.percentile(times, 99) * 1e3:6.2f} ms")
    return rate


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--n", type=int, default=5000)
    ap.add_argument("--no-visdom", action="store_true", help="measure dash-server only")
    args = ap.parse_args()
    if args.n < 2 * WINDOW:
        ap.error(f"--n must be at least {2 * WINDOW}")
    os.environ.setdefault("NO_PROXY", "127.0.0.1,localhost")
    rates = {}
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        servers = [("dash-server", start_dash)] + ([] if args.no_visdom else [("visdom", start_visdom)])
        print(f"{args.n} single-point appends through visdom {visdom.__version__ if hasattr(visdom, '__version__') else ''}"
              f" client (use_incoming_socket=False)")
        for name, start in servers:
            port = free_port()
            proc = start(tmp, port)
            try:
                rates[name] = report(name, run_loop(port, args.n))
            finally:
                proc.terminate()
                proc.wait(15)
    if len(rates) == 2:
        print(f"dash-server / visdom: {rates['dash-server'] / rates['visdom']:.1f}x")


if __name__ == "__main__":
    main()
