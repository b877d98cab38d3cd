"""Runs examples/train_classifier.py against its own dash-server and prints what the hooks recorded.

For a machine with an NVIDIA GPU: one row per trace of the system monitor's panes (NVML and the torch CUDA
allocator, CPU, memory), the DataLoader profiler's panes and the alerts, as n / min / median / max / last:
    python bench/gpu_report.py [--epochs 15] [--out DIR]   (DIR gets every pane's points as JSON)
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from common import free_port, start_server, stop, timed_get  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
ENV = "gpu_report"


def get(port: int, path: str) -> dict:
    return json.loads(timed_get(f"http://127.0.0.1:{port}/api/v1{path}", timeout=30)[1])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--epochs", type=int, default=15, help="the example's epochs (3 take ~2 s on a GPU)")
    ap.add_argument("--out", type=Path, help="folder for every pane's exported points (JSON)")
    args = ap.parse_args()
    port, tmp = free_port(), Path(tempfile.mkdtemp())
    srv = start_server(tmp / "report.db", port)
    try:
        t0 = time.perf_counter()
        subprocess.run([sys.executable, str(ROOT / "examples" / "train_classifier.py"), "--port", str(port),
                        "--env", ENV, "--epochs", str(args.epochs)], check=True)
        took = time.perf_counter() - t0
        panes = get(port, f"/envs/{ENV}")["panes"]
        print(f"\nexample: {args.epochs} epochs in {took:.1f} s; {len(panes)} panes in env {ENV!r}")
        exported: dict[str, object] = {}
        print(f"{'pane':<22} {'trace':<30} {'n':>5} {'min':>10} {'median':>10} {'max':>10} {'last':>10}")
        for pane in sorted(panes, key=lambda p: p["win"]):
            win = pane["win"]
            if pane.get("kind") != "line":
                continue
            data = get(port, f"/envs/{ENV}/panes/{win}/export?format=json")
            exported[win] = data
            for t in data["traces"]:
                ys = [y for y in t["y"] if y is not None]
                if not ys:
                    continue
                print(f"{win:<22} {t['name'][:30]:<30} {len(ys):>5} {min(ys):>10.4g} {statistics.median(ys):>10.4g}"
                      f" {max(ys):>10.4g} {ys[-1]:>10.4g}")
        for win in ("sys_note", "alerts", "data_loader"):
            if any(p["win"] == win for p in panes):
                html = get(port, f"/envs/{ENV}/panes/{win}")["data"].get("html", "")
                exported[win] = html
                print(f"\n{win}:\n  " + html.replace("<br>", "\n  "))
        if args.out:
            args.out.mkdir(parents=True, exist_ok=True)
            (args.out / "gpu_report.json").write_text(json.dumps(exported))
    finally:
        stop(srv)


if __name__ == "__main__":
    main()
