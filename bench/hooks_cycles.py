"""The hooks' per-step cost on the training thread, counted by valgrind: instructions and modelled cycles.

bench/hooks_overhead.py times the loop on the wall clock, where a shared VM's neighbours move the same code by
±5% from run to run. This bench runs each arm of the same loop under callgrind (instrumentation switched on only
around the measured steps, threads counted apart), so its figures are the same on every run:

    python bench/hooks_cycles.py [--steps 1000] [--arms raw,all,dataloader,watch]

(needs valgrind: apt-get install valgrind).

Per arm and per step of the training thread it prints the instructions, the simulated cache misses (32 KiB L1s,
1 MiB L2 as on the machines we test on) and modelled cycles = instructions + 14 per L1 miss that hits L2 + 50 per L2
miss (and the ratio again with 150 per L2 miss, for a busy L3), with ratios against the loop without hooks. The
model is crude (valgrind runs torch's AVX2 kernels, no prefetcher): its ratio says how much the hooks add, not what
a step costs. SystemMonitor is left out: its thread is time-driven, and under valgrind's ~50x slow-down it would
sample 50x more often per step; hooks_overhead.py times it.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

HERE = Path(__file__).parent
CACHES = ["--I1=32768,8,64", "--D1=32768,8,64", "--LL=1048576,8,64"]
HOOKS = {"raw": set(), "all": {"dataloader", "watch"}, "dataloader": {"dataloader"}, "watch": {"watch"}}


def child(arm: str, steps: int, port: int) -> None:
    """Runs under valgrind: warm up, say READY, run `steps` measured steps when told, say DONE."""
    import logging

    import torch

    import paneboard

    sys.path.insert(0, str(HERE))
    from hooks_overhead import make_loop, run

    logging.disable(logging.WARNING)
    torch.set_num_threads(1)
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


def measure(arm: str, steps: int, port: int, out: Path) -> dict[str, int]:
    """One arm under callgrind; the training thread's counters over the measured steps."""
    dump = out / f"{arm}.cg"
    cmd = ["valgrind", "--tool=callgrind", "--instr-atstart=no", "--separate-threads=yes", "--cache-sim=yes",
           *CACHES, f"--callgrind-out-file={dump}", sys.executable, __file__, "--child", arm,
           "--steps", str(steps), "--port", str(port)]
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


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=1000, help="measured steps per arm (1000: ~7 min under valgrind)")
    ap.add_argument("--arms", default="raw,all,dataloader,watch")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--port", type=int, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(args.child, args.steps, args.port)
        return
    if not (shutil.which("valgrind") and shutil.which("callgrind_control")):
        sys.exit("hooks_cycles: valgrind is not installed (apt-get install valgrind)")
    arms = ["raw"] + [a for a in args.arms.split(",") if a != "raw"]
    sys.path.insert(0, str(HERE))
    from common import free_port, start_server, stop

    with tempfile.TemporaryDirectory() as tmp:
        port = free_port()
        srv = start_server(Path(tmp) / "b.db", port)
        try:
            with ThreadPoolExecutor(os.cpu_count() or 1) as pool:
                got = dict(zip(arms, pool.map(lambda a: measure(a, args.steps, port, Path(tmp)), arms), strict=True))
        finally:
            stop(srv)
    base, n = got["raw"], args.steps
    print(f"training thread per step, {n} measured steps under callgrind (watch_dataloader(every=50), "
          f"watch(model, every=100)); modelled cycles = Ir + 14 x L1 misses + 50 x L2 misses")
    print(f"{'arm':>10} {'instructions':>13} {'L1 misses':>10} {'L2 misses':>10} {'mod. cycles':>12} "
          f"{'instr. ratio':>12} {'cycle ratio':>11} {'(L2 miss 150)':>13}")
    for arm, c in got.items():
        l1, l2 = misses(c)
        print(f"{arm:>10} {c['Ir'] / n:>13,.0f} {l1 / n:>10,.0f} {l2 / n:>10,.0f} {cycles(c) / n:>12,.0f} "
              f"{c['Ir'] / base['Ir']:>12.4f} {cycles(c) / cycles(base):>11.4f} "
              f"{cycles(c, 150) / cycles(base, 150):>13.4f}")


if __name__ == "__main__":
    main()
