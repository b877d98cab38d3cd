"""Cost in the training thread of a W&B-style `log({10 scalars}, step=s)`: paneboard.log beside wandb.log (offline)
and trackio.log where installed, in one run. Usage: python bench/wandb_api.py [--calls N]"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from collections.abc import Callable
from typing import Any

from common import free_port, guarded, has_module, start_server, stop, temp_dir

KEYS = [f"metric_{k}" for k in range(10)]


def per_call_us(log: Callable[..., Any], calls: int, repeats: int = 5) -> dict[str, float]:
    """Median and best of `repeats` timings of `calls` calls, in microseconds per call (values vary per call).

    `thread_cpu_us`: the calling thread's own CPU time per call (time.thread_time), which leaves out the time it
    waits for the GIL or a core while the sender thread, the server or other processes run: on a busy machine
    the wall figures carry that load, the CPU figure is the work the call itself does. `process_cpu_us`: every
    thread of this process per call (the sender's encoding included; the server runs in its own process)."""
    rows = [{k: 0.1 * j for j, k in enumerate(KEYS)} for _ in range(64)]
    out, cpu, proc, step = [], [], [], 0
    for _ in range(repeats):
        t0, c0, p0 = time.perf_counter(), time.thread_time(), time.process_time()
        for i in range(calls):
            log(rows[i & 63], step=step)
            step += 1
        cpu.append((time.thread_time() - c0) / calls * 1e6)
        proc.append((time.process_time() - p0) / calls * 1e6)
        out.append((time.perf_counter() - t0) / calls * 1e6)
    return {"median_us": round(statistics.median(out), 2), "best_us": round(min(out), 2),
            "thread_cpu_median_us": round(statistics.median(cpu), 2),
            "process_cpu_median_us": round(statistics.median(proc), 2), "calls": calls}


def bench_paneboard(calls: int) -> dict[str, Any]:
    import paneboard

    folder = temp_dir("wandb-api")
    port = free_port()
    proc = start_server(folder / "pb.db", port)
    try:
        os.environ["PANEBOARD_URL"] = f"http://127.0.0.1:{port}"
        run = paneboard.init(project="bench", name="ten-scalars", dir=str(folder))
        run.client.check_connection(10)
        res = per_call_us(paneboard.log, calls)
        t0 = time.perf_counter()
        res["delivered"] = run.client.flush(120)
        res["drain_s"] = round(time.perf_counter() - t0, 2)
        paneboard.finish()
        return res
    finally:
        stop(proc)


def bench_wandb(calls: int) -> dict[str, Any]:
    import wandb

    run = wandb.init(project="bench", mode="offline", dir=str(temp_dir("wandb-offline")))
    try:
        return per_call_us(wandb.log, calls)
    finally:
        run.finish()


def bench_trackio(calls: int) -> dict[str, Any]:
    import trackio

    trackio.init(project="bench")
    try:
        return per_call_us(lambda d, step: trackio.log(d, step=step), calls)
    finally:
        trackio.finish()


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--calls", type=int, default=20_000)
    args = p.parse_args()
    results = {"paneboard.log": guarded(bench_paneboard, args.calls),
               "wandb.log (offline)": guarded(bench_wandb, max(args.calls // 10, 100)) if has_module("wandb")
               else {"n/a": "wandb not installed"},
               "trackio.log": guarded(bench_trackio, max(args.calls // 10, 100)) if has_module("trackio")
               else {"n/a": "trackio not installed"}}
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
