"""The hooks' per-step cost on the training thread, counted by valgrind: instructions and modelled cycles.

bench/hooks_overhead.py times the loop on the wall clock, where a shared VM's neighbours move the same code by
±5% from run to run. This bench runs each arm of the same loop under callgrind (instrumentation switched on only
around the measured steps, threads counted apart), so its figures are the same on every run:

    python bench/hooks_cycles.py [--steps 1000] [--arms raw,all,dataloader,watch] [--pads 0,1,2]

(needs valgrind: apt-get install valgrind).

Most of what the hooks add in modelled cycles is cache misses inside torch's own kernels, which move with where the
heap places torch's buffers: any change of the process's allocations moves them. --pads runs every arm once per
heap layout (pad k > 0 holds a few odd-sized blocks allocated before the loop) and prints each layout's ratios and
their mean: the bare loop against itself across layouts (the "raw" rows) is the model's own noise floor.

Per arm and per step of the training thread it prints the instructions, the simulated cache misses (32 KiB L1s,
1 MiB L2 as on the machines we test on) and modelled cycles = instructions + 14 per L1 miss that hits L2 + 50 per L2
miss (and the ratio again with 150 per L2 miss, for a busy L3), with ratios against the loop without hooks. The
model is crude (valgrind runs torch's AVX2 kernels, no prefetcher): its ratio says how much the hooks add, not what
a step costs. SystemMonitor runs outside valgrind: its thread is time-driven, and under valgrind's ~50x slow-down
it would sample 50x more often per step. Its thread's CPU time per sample is timed instead; at one sample per second
that is the most it can take from the training thread (all of it holding the GIL).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

HERE = Path(__file__).parent
CACHES = ["--I1=32768,8,64", "--D1=32768,8,64", "--LL=1048576,8,64"]
HOOKS = {"raw": set(), "all": {"dataloader", "watch"}, "dataloader": {"dataloader"}, "watch": {"watch"}}


def pad_heap(pad: int) -> list[object]:
    """Blocks held for the process's life that shift where later allocations land (none for pad 0)."""
    import torch

    return [bytearray(1000 * pad + 72 * k) for k in range(8 * pad)] + [torch.empty(pad * 3001)]


def child(arm: str, steps: int, port: int, pad: int) -> None:
    """Runs under valgrind: warm up, say READY, run `steps` measured steps when told, say DONE."""
    import logging

    import torch

    import paneboard

    sys.path.insert(0, str(HERE))
    from hooks_overhead import make_loop, run

    logging.disable(logging.WARNING)
    torch.set_num_threads(1)
    held = pad_heap(pad) if pad else []
    model, opt, loader = make_loop()
    client = paneboard.Client(server="http://127.0.0.1", port=port, env="bench_cycles", spool_dir=False)
    use = HOOKS[arm]
    it = paneboard.watch_dataloader(loader, client, every=50) if "dataloader" in use else loader
    if "watch" in use:
        paneboard.watch(model, client, optimizer=opt, every=100)
    run(it, model, opt, 300)
    print("READY", os.getpid(), flush=True)
    sys.stdin.readline()
    run(it, model, opt, steps)
    print("DONE", flush=True)
    sys.stdin.readline()
    client.close_connection(timeout=5)
    del held


def measure(arm: str, steps: int, port: int, out: Path, pad: int = 0) -> dict[str, int]:
    """One arm under callgrind in heap layout `pad`; the training thread's counters over the measured steps."""
    dump = out / f"{arm}.{pad}.cg"
    cmd = ["valgrind", "--tool=callgrind", "--instr-atstart=no", "--separate-threads=yes", "--cache-sim=yes",
           *CACHES, f"--callgrind-out-file={dump}", sys.executable, __file__, "--child", arm,
           "--steps", str(steps), "--port", str(port), "--pads", str(pad)]
    p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    assert p.stdin is not None and p.stdout is not None
    line = p.stdout.readline().split()
    if line[:1] != ["READY"]:
        p.kill()
        raise RuntimeError(f"arm {arm}: the child did not start under valgrind")
    pid = line[1]

    def control(*args: str) -> None:
        subprocess.run(["callgrind_control", *args, pid], check=True, capture_output=True)

    control("-i", "on")
    p.stdin.write("\n")
    p.stdin.flush()
    p.stdout.readline()  # DONE
    control("-d", "measured")
    control("-i", "off")
    p.stdin.write("\n")
    p.stdin.flush()
    p.wait()
    return summary(Path(f"{dump}.1-01"))  # dump 1, thread 1: the training thread


def summary(path: Path) -> dict[str, int]:
    events: list[str] = []
    for line in path.read_text().splitlines():
        if line.startswith("events:"):
            events = line.split()[1:]
        elif line.startswith("summary:"):
            return dict(zip(events, map(int, line.split()[1:]), strict=True))
    raise RuntimeError(f"no summary in {path}")


def misses(c: dict[str, int]) -> tuple[int, int]:
    """(L1 misses, L2 misses): instruction fetches, data reads and data writes together."""
    return c["I1mr"] + c["D1mr"] + c["D1mw"], c["ILmr"] + c["DLmr"] + c["DLmw"]


def cycles(c: dict[str, int], l2_miss: int = 50) -> float:
    """Modelled cycles: an L1 miss that hits L2 ~14 cycles, an L2 miss that hits L3 ~50 (Zen 4 latencies)."""
    l1, l2 = misses(c)
    return c["Ir"] + 14 * (l1 - l2) + l2_miss * l2


def monitor_sample_cpu(port: int, samples: int = 200) -> float:
    """Seconds of CPU one SystemMonitor sample costs its thread (the median of 5 runs of `samples`)."""
    import time

    import paneboard

    client = paneboard.Client(server="http://127.0.0.1", port=port, env="bench_cycles", spool_dir=False)
    mon = paneboard.SystemMonitor(client, interval=1.0, start=False)
    mon._setup()  # psutil and NVML (where present), as the monitor's thread does when it starts
    mon.sample()
    runs = []
    for _ in range(5):
        c0 = time.thread_time()
        for _ in range(samples):
            mon.sample()
        runs.append((time.thread_time() - c0) / samples)
    client.close_connection(timeout=5)
    return statistics.median(runs)


def table(got: dict[str, dict[str, int]], n: int) -> None:
    """One heap layout's rows: per step counters and ratios against that layout's bare loop."""
    base = got["raw"]
    print(f"{'arm':>10} {'instructions':>13} {'L1 misses':>10} {'L2 misses':>10} {'mod. cycles':>12} "
          f"{'instr. ratio':>12} {'cycle ratio':>11} {'(L2 miss 150)':>13}")
    for arm, c in got.items():
        l1, l2 = misses(c)
        instr, cyc, cyc150 = ratios(c, base)
        print(f"{arm:>10} {c['Ir'] / n:>13,.0f} {l1 / n:>10,.0f} {l2 / n:>10,.0f} {cycles(c) / n:>12,.0f} "
              f"{instr:>12.4f} {cyc:>11.4f} {cyc150:>13.4f}")


def ratios(c: dict[str, int], base: dict[str, int]) -> tuple[float, float, float]:
    """Instructions, modelled cycles, and modelled cycles with 150 per L2 miss, each against `base`."""
    return c["Ir"] / base["Ir"], cycles(c) / cycles(base), cycles(c, 150) / cycles(base, 150)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=1000, help="measured steps per arm (1000: ~7 min under valgrind)")
    ap.add_argument("--arms", default="raw,all,dataloader,watch")
    ap.add_argument("--pads", default="0", help="heap layouts to run every arm in (e.g. 0,1,2); 0: as it comes")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--port", type=int, help=argparse.SUPPRESS)
    args = ap.parse_args()
    pads = [int(p) for p in args.pads.split(",")]
    if args.child:
        child(args.child, args.steps, args.port, pads[0])
        return
    if not (shutil.which("valgrind") and shutil.which("callgrind_control")):
        sys.exit("hooks_cycles: valgrind is not installed (apt-get install valgrind)")
    arms = ["raw"] + [a for a in args.arms.split(",") if a != "raw"]
    runs = [(a, p) for p in pads for a in arms]
    sys.path.insert(0, str(HERE))
    from common import free_port, start_server, stop

    with tempfile.TemporaryDirectory() as tmp:
        port = free_port()
        srv = start_server(Path(tmp) / "b.db", port)
        try:
            with ThreadPoolExecutor(os.cpu_count() or 1) as pool:
                counts = list(pool.map(lambda r: measure(r[0], args.steps, port, Path(tmp), r[1]), runs))
            monitor = monitor_sample_cpu(port)
        finally:
            stop(srv)
    got = dict(zip(runs, counts, strict=True))
    n = args.steps
    print(f"training thread per step, {n} measured steps under callgrind (watch_dataloader(every=50), "
          f"watch(model, every=100)); modelled cycles = Ir + 14 x L1 misses + 50 x L2 misses")
    for p in pads:
        if len(pads) > 1:
            print(f"-- heap layout {p}")
        table({a: got[a, p] for a in arms}, n)
    if len(pads) > 1:
        print(f"-- mean ratio over {len(pads)} heap layouts (min-max), each against its layout's bare loop")
        for arm in arms[1:]:
            rs = [ratios(got[arm, p], got["raw", p]) for p in pads]
            print(f"{arm:>10} " + "  ".join(
                f"{what} {statistics.mean(v):.4f} ({min(v):.4f}-{max(v):.4f})"
                for what, v in zip(("instr.", "cycles", "cycles(150)"), zip(*rs, strict=True), strict=True)))
        # the bare loop in another layout against layout pads[0]: how far placement alone moves the model
        aa = [ratios(got["raw", p], got["raw", pads[0]]) for p in pads[1:]]
        print(f"{'raw A/A':>10} " + "  ".join(
            f"{what} {min(r[k] for r in aa):.4f}-{max(r[k] for r in aa):.4f}"
            for k, what in enumerate(("instr.", "cycles", "cycles(150)")))
              + f"  (bare loop, layouts {','.join(map(str, pads[1:]))} against layout {pads[0]}: the noise floor)")
    print(f"SystemMonitor(1 s), outside valgrind: {monitor * 1e3:.3f} ms of its thread's CPU per sample, at most "
          f"+{monitor * 100:.3f}% of the training thread's time")


if __name__ == "__main__":
    main()
