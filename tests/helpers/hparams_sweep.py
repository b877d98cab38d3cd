"""A synthetic sweep for the HParams tests and screenshots: runs with a config and a loss series, as events."""

from __future__ import annotations

import math
import random

OPTIMIZERS = ("adamw", "sgd", "lion")


def sweep_run(i: int, rng: random.Random) -> tuple[dict, float]:
    """One run's config and final loss: the loss depends mostly on lr (best near 1e-3), a little on the optimizer,
    not on the rest; every 5th run lacks dropout (a gap on that axis)."""
    lr = 10 ** rng.uniform(-5, -1)
    config = {"lr": lr, "weight_decay": 10 ** rng.uniform(-6, -2), "batch_size": rng.choice([32, 64, 128, 256]),
              "optimizer": rng.choice(OPTIMIZERS), "seed": i, "model": {"depth": rng.choice([2, 4, 8]), "act": "gelu"},
              "dataset": "cifar10", "dropout": round(rng.uniform(0, 0.5), 3), "run_name": f"trial-{i}"}
    if i % 5 == 0:
        del config["dropout"]
    loss = 0.3 + 0.4 * (math.log10(lr) + 3) ** 2 + (0.25 if config["optimizer"] == "sgd" else 0.0) \
        + rng.gauss(0, 0.05)
    return config, loss


def sweep_events(n: int, prefix: str = "sweep", seed: int = 0) -> list[dict]:
    """run_config, a 5-point "loss" line and a 1-point "val/acc" line per run, ready for POST /api/v1/events."""
    rng = random.Random(seed)
    events: list[dict] = []
    for i in range(n):
        config, loss = sweep_run(i, rng)
        env = f"{prefix}{i:04d}"
        ys = [loss + 2.0 / (k + 1) for k in range(4)] + [loss]
        acc = max(0.0, min(1.0, 1.1 - loss / 2 + rng.gauss(0, 0.02)))  # tracks the loss, not exactly
        events += [{"op": "run_config", "env": env, "config": config},
                   {"op": "set", "env": env, "win": "loss", "kind": "line", "opts": {"title": "loss"},
                    "traces": [{"name": "loss", "x": list(range(5)), "y": ys}]},
                   {"op": "set", "env": env, "win": "val/acc", "kind": "line", "opts": {"title": "val/acc"},
                    "traces": [{"name": "val/acc", "x": [4], "y": [acc]}]}]
    return events


def hf_args(n: int = 100) -> dict:
    """~n TrainingArguments-like hparams as the transformers integration names them (args/<field>)."""
    hp: dict = {"args/learning_rate": 5e-5, "args/per_device_train_batch_size": 8, "args/num_train_epochs": 3.0,
                "args/weight_decay": 0.0, "args/adam_epsilon": 1e-8, "args/lr_scheduler_type": "linear",
                "args/gradient_accumulation_steps": 1, "args/seed": 42, "args/output_dir": "out/run-1"}
    for k in range(n - len(hp)):
        hp[f"args/option_with_a_rather_long_name_{k:02d}"] = k if k % 3 else f"value{k}"
    return hp
