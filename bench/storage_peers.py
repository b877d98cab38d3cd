"""Peers' bytes per point for bench/storage.py: TensorBoard, MLflow (file store and SQLite) and W&B offline, each
fed the same noisy float32 curve with its wall times, one scalar tag, on a sample of each workload's shape.

Peers store a record per point (an event, a line, a row, a protobuf), so their bytes per point hardly move with
the count: each is measured on a sample (a few runs of the workload's length, or the first points of a long
series) that fits this shared machine's time, and the sample is printed beside the figure.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from common import guarded, has_module

# Figures measured in the issue #44 survey for a peer not installed here (Aim 3.x, a 10M series).
NOT_INSTALLED = {"aim": 171.0}

Curve = Callable[[int, int], np.ndarray]  # (points, seed) -> y


def tree_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def tensorboard(tmp: Path, runs: int, points: int, curve: Curve) -> dict[str, Any]:
    """torch's SummaryWriter.add_scalar per point (with its wall time), one logdir per run."""
    if not has_module("tensorboard"):
        return {"na": "tensorboard is not installed"}
    from torch.utils.tensorboard import SummaryWriter

    wall0 = time.time()
    for r in range(runs):
        w = SummaryWriter(log_dir=str(tmp / "tb" / f"run{r}"))
        for i, y in enumerate(curve(points, r).tolist()):
            w.add_scalar("loss", y, i, walltime=wall0 + i * 0.01)
        w.close()
    return {"bytes": tree_bytes(tmp / "tb"), "points": runs * points}


def mlflow(tmp: Path, runs: int, points: int, curve: Curve, backend: str) -> dict[str, Any]:
    """MlflowClient.log_batch of 1,000 metrics a call (its limit): `file` store or `sqlite` tracking database."""
    if not has_module("mlflow"):
        return {"na": "mlflow is not installed"}
    os.environ["MLFLOW_ALLOW_FILE_STORE"] = "true"  # MLflow 3 keeps the file store only on request
    logging.getLogger("mlflow").setLevel(logging.WARNING)
    from mlflow.entities import Metric
    from mlflow.tracking import MlflowClient

    root = tmp / f"mlflow-{backend}"
    root.mkdir(parents=True)
    uri = f"file://{root}/mlruns" if backend == "file" else f"sqlite:///{root}/mlflow.db"
    client = MlflowClient(tracking_uri=uri)
    exp = client.create_experiment("bench", artifact_location=str(root / "artifacts"))
    before = tree_bytes(root)  # an empty store's own files are not the points' cost
    ts0 = int(time.time() * 1000)
    for r in range(runs):
        run_id = client.create_run(exp).info.run_id
        ys = curve(points, r).tolist()
        for lo in range(0, points, 1000):
            client.log_batch(run_id, metrics=[Metric("loss", ys[i], ts0 + 10 * i, i)
                                              for i in range(lo, min(points, lo + 1000))])
        client.set_terminated(run_id)
    return {"bytes": tree_bytes(root) - before, "points": runs * points}


def wandb_offline(tmp: Path, runs: int, points: int, curve: Curve) -> dict[str, Any]:
    """wandb.init(mode="offline") and run.log per step: the run directories it leaves (.wandb file, logs)."""
    if not has_module("wandb"):
        return {"na": "wandb is not installed"}
    os.environ["WANDB_SILENT"] = "true"
    import wandb

    for r in range(runs):
        run = wandb.init(mode="offline", dir=str(tmp / "wandb"), project="bench", name=f"run{r}", reinit=True)
        for i, y in enumerate(curve(points, r).tolist()):
            run.log({"loss": y}, step=i)
        run.finish()
    return {"bytes": tree_bytes(tmp / "wandb"), "points": runs * points}


def measure(tmp: Path, runs: int, points: int, curve: Curve) -> dict[str, dict[str, Any]]:
    """Every installed peer on a sample of `runs` x `points`: the slower the peer writes, the smaller its sample."""
    sample = {"tensorboard": (min(runs, 10), min(points, 500_000)), "mlflow-file": (min(runs, 10), min(points, 200_000)),
              "mlflow-sqlite": (min(runs, 4), min(points, 50_000)), "wandb-offline": (min(runs, 2), min(points, 20_000))}
    out: dict[str, dict[str, Any]] = {}
    for peer, (r, p) in sample.items():
        where = tmp / f"{peer}-{runs}x{points}"
        where.mkdir(parents=True)
        if peer == "tensorboard":
            got = guarded(tensorboard, where, r, p, curve)
        elif peer.startswith("mlflow"):
            got = guarded(mlflow, where, r, p, curve, peer.split("-")[1])
        else:
            got = guarded(wandb_offline, where, r, p, curve)
        got["sample"] = f"{r} x {p:,}"
        out[peer] = got
    return out


def cell(got: dict[str, Any]) -> str:
    if "na" in got:
        return f"n/a ({got['na'][:60]})"
    return f"{got['bytes'] / got['points']:.1f} ({got['sample']})"
