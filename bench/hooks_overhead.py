"""Per-step overhead of watch_dataloader + SystemMonitor + watch(model) on a small CPU training loop.

Starts its own dash-server on a free port and trains ONE model on ONE DataLoader in alternating rounds, with the
hooks on and off (the watched loader wraps the same DataLoader, the optimizer hook is removed and re-added, the
monitor's thread is stopped and restarted), so the two arms differ only by the hooks: separate model copies differ
by ~1% on their own (memory placement). Prints the ratio of the best round of each arm and the median and quartiles
of the per-pair ratios (on a shared VM the quartiles can span ±5%: bench/hooks_cycles.py counts the same loop under
valgrind, where neighbours move nothing), and the training thread's page faults and kernel time per step:
    python bench/hooks_overhead.py [--steps 3000] [--rounds 7] [--only dataloader,monitor,watch|none] [--device cuda]
(--device cuda: the same loop with the model and batches on the GPU)
"""

from __future__ import annotations

import argparse
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import NamedTuple

import torch
from torch.utils.data import DataLoader, TensorDataset

import paneboard

sys.path.insert(0, str(Path(__file__).parent))
from common import free_port, start_server, stop  # noqa: E402


class Round(NamedTuple):
    """One round's seconds per step: wall and process CPU time (every thread: the hooks' own included; time the VM
    took the core away excluded); and the training thread's minor page faults and kernel seconds per step, which
    callgrind (bench/hooks_cycles.py) cannot see."""
    wall: float
    cpu: float
    faults: float
    sys: float


def _thread_usage() -> tuple[int, float]:
    """This thread's minor page faults and system seconds so far (the process's where Linux's per-thread is absent)."""
    u = resource.getrusage(getattr(resource, "RUSAGE_THREAD", resource.RUSAGE_SELF))
    return u.ru_minflt, u.ru_stime


def run(loader, model, opt, steps: int, device: str = "cpu") -> Round:
    """One round of a plain classification loop over `loader`, per step."""
    cuda = device.startswith("cuda")
    if cuda:
        torch.cuda.synchronize()
    (f0, s0), done, t0, c0 = _thread_usage(), 0, time.perf_counter(), time.process_time()
    while done < steps:
        for x, y in loader:
            if cuda:
                x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
            opt.zero_grad()
            torch.nn.functional.cross_entropy(model(x), y).backward()
            opt.step()
            done += 1
            if done == steps:
                break
    if cuda:
        torch.cuda.synchronize()  # the queued steps count
    wall, cpu, (f1, s1) = time.perf_counter() - t0, time.process_time() - c0, _thread_usage()
    return Round(wall / steps, cpu / steps, (f1 - f0) / steps, (s1 - s0) / steps)


def make_loop(device: str = "cpu") -> tuple[torch.nn.Module, torch.optim.Optimizer, DataLoader]:
    """The small classifier, its optimizer and its DataLoader (also used by bench/hooks_cycles.py)."""
    # 16k samples = 512 steps per epoch: the per-epoch panes (labels served, first batch) are amortised
    # over an epoch, and each round's early break ends a partial one as well
    torch.manual_seed(0)
    ds = TensorDataset(torch.rand(16384, 1, 16, 16), torch.randint(0, 10, (16384,)))
    model = torch.nn.Sequential(torch.nn.Conv2d(1, 8, 3), torch.nn.ReLU(), torch.nn.Flatten(),
                                torch.nn.Linear(8 * 14 * 14, 10)).to(device)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    return model, opt, DataLoader(ds, batch_size=32, shuffle=True, pin_memory=device.startswith("cuda"))


class Hooks:
    """The three hooks installed once (steady state, as in a real run), switched on and off between rounds."""

    def __init__(self, client: paneboard.Client, loader: DataLoader, model: torch.nn.Module,
                 opt: torch.optim.Optimizer, use: set[str]) -> None:
        self.loader, self.opt = loader, opt
        self.watched = paneboard.watch_dataloader(loader, client, every=50) if "dataloader" in use else loader
        self.mon = paneboard.SystemMonitor(client, interval=1.0, start=False) if "monitor" in use else None
        self.w = paneboard.watch(model, client, optimizer=opt, every=100) if "watch" in use else None

    def on(self) -> DataLoader:
        if self.mon is not None:
            self.mon.start()  # the first sample comes one interval after each start, as after the first
        if self.w is not None and not self.w._handles:
            # re-install the optimizer hook of the same watch: no second summary pane or first-step log
            self.w._handles.append(self.opt.register_step_pre_hook(self.w._on_step))
        return self.watched

    def off(self) -> DataLoader:
        if self.mon is not None:
            self.mon.stop()
        if self.w is not None:
            self.w.unwatch()
        return self.loader


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=3000, help="steps per round (3000 ≈ 2.3 s: two monitor samples)")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--only", help="measure some hooks alone (comma-separated: dataloader, monitor, watch); "
                    "none: both arms bare (A/A), the bench's own noise floor")
    ap.add_argument("--device", default="cpu", help="where the model trains: cpu (default) or cuda")
    args = ap.parse_args()
    torch.set_num_threads(1)
    port, tmp = free_port(), tempfile.mkdtemp()
    srv = start_server(Path(tmp) / "b.db", port)
    try:
        client = paneboard.Client(server="http://127.0.0.1", port=port, env="bench_hooks", spool_dir=False)
        model, opt, loader = make_loop(args.device)
        hooks_all = {"dataloader", "monitor", "watch"}
        use = set(args.only.split(",")) - {"none"} if args.only else hooks_all
        if use - hooks_all:
            sys.exit(f"hooks_overhead: --only takes {', '.join(sorted(hooks_all))} or none")
        hooks = Hooks(client, loader, model, opt, use)
        run(hooks.on(), model, opt, 300, args.device)  # warm-up, both arms
        run(hooks.off(), model, opt, 300, args.device)
        base, hooked = [], []
        for r in range(args.rounds):
            for arm in ("off", "on") if r % 2 == 0 else ("on", "off"):  # ABBA: no arm always runs first
                loader = hooks.on() if arm == "on" else hooks.off()
                (hooked if arm == "on" else base).append(run(loader, model, opt, args.steps, args.device))
        hooks.off()
        client.flush(timeout=30)
        b, h = min(r.wall for r in base), min(r.wall for r in hooked)
        ratios = [x.wall / y.wall for x, y in zip(hooked, base, strict=True)]
        pairs = statistics.median(ratios)
        q1, _, q3 = statistics.quantiles(ratios, n=4) if len(ratios) > 1 else (pairs, pairs, pairs)
        cpu = min(r.cpu for r in hooked) / min(r.cpu for r in base)
        print(f"without hooks: {b * 1e3:.3f} ms/step   with hooks: {h * 1e3:.3f} ms/step   "
              f"overhead: {(h - b) * 1e6:+.1f} us/step   ratio: {h / b:.3f}  (goal <= 1.02; "
              f"median of per-round ratios {pairs:.3f}, quartiles {q1:.3f}-{q3:.3f}: the noise; "
              f"CPU-time ratio {cpu:.3f}; "
              f"best of {args.rounds} alternating rounds of {args.steps} steps on {args.device}; hooks: "
              f"{args.only or 'watch_dataloader(every=50) + SystemMonitor(1 s) + watch(model, every=100)'})")
        for name, arm in (("without", base), ("with", hooked)):
            print(f"rounds {name:>7} hooks, ms/step wall (CPU): "
                  + " ".join(f"{r.wall * 1e3:.3f} ({r.cpu * 1e3:.3f})" for r in arm))
        faults = [statistics.median(r.faults for r in arm) for arm in (base, hooked)]
        kernel = [statistics.median(r.sys for r in arm) * 1e6 for arm in (base, hooked)]
        print(f"training thread per step (median round), without / with hooks: {faults[0]:.2f} / {faults[1]:.2f} "
              f"minor page faults, {kernel[0]:.1f} / {kernel[1]:.1f} us in the kernel (a heap that is trimmed and "
              f"regrown every step shows here, not in hooks_cycles)")
        client.close_connection(timeout=5)
    finally:
        stop(srv)


if __name__ == "__main__":
    main()
