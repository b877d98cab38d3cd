"""Per-step cost the framework integrations add on the training thread, against a real dash-server.

    python bench/integrations_overhead.py [--steps 20000]

Times PaneboardLogger.log_metrics (Lightning), PaneboardCallback.on_log (Hugging Face) and
PaneboardTracker.log (Accelerate) with three metrics per step, in the calling thread.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path
from types import SimpleNamespace

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402


def timed(call, steps: int) -> float:
    """Median µs per call over 5 rounds of `steps` calls."""
    rounds = []
    for _ in range(5):
        t0 = time.perf_counter()
        for step in range(steps):
            call(step)
        rounds.append((time.perf_counter() - t0) / steps * 1e6)
    return statistics.median(rounds)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--steps", type=int, default=20_000)
    args = p.parse_args()
    tmp = common.temp_dir("integrations")
    port = common.free_port()
    proc = common.start_server(tmp / "bench.db", port)
    try:
        from paneboard.integrations.accelerate import PaneboardTracker
        from paneboard.integrations.lightning import PaneboardLogger
        from paneboard.integrations.transformers import PaneboardCallback

        server = "http://127.0.0.1"
        metrics = {"loss": 0.5, "acc": 0.75, "lr": 1e-3}
        logger = PaneboardLogger(env="pl", server=server, port=port)
        pl_us = timed(lambda s: logger.log_metrics(metrics, s), args.steps)
        cb = PaneboardCallback(env="hf", server=server, port=port)
        state = SimpleNamespace(is_world_process_zero=True, global_step=0)
        hf_args = SimpleNamespace(run_name="hf", output_dir="hf")

        def on_log(step: int) -> None:
            state.global_step = step
            cb.on_log(hf_args, state, None, logs=metrics)

        hf_us = timed(on_log, args.steps)
        tracker = PaneboardTracker("acc", server=server, port=port)
        acc_us = timed(lambda s: tracker.log(metrics, step=s), args.steps)
        for flush in (logger.writer.flush, cb.writer.flush, tracker.writer.flush):
            flush(timeout=120)
        print(f"three metrics per step, median of 5 x {args.steps:,} steps (µs per step, training thread):")
        print(f"  Lightning  PaneboardLogger.log_metrics   {pl_us:6.1f}")
        print(f"  HF         PaneboardCallback.on_log      {hf_us:6.1f}")
        print(f"  Accelerate PaneboardTracker.log          {acc_us:6.1f}")
    finally:
        common.stop(proc)
    return 0


if __name__ == "__main__":
    sys.exit(main())
