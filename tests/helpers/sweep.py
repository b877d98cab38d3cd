"""A sweep logged in bulk through the HTTP event API: many runs of a few line tags, a handful of requests."""

from __future__ import annotations

import numpy as np

from .browser import http

TAGS = ("train/loss", "val/loss", "train/acc")


def sweep_events(names: list[str], steps: int, tags: tuple[str, ...] = TAGS, seed: int = 0) -> list[dict]:
    """One `set` line event per (run, tag): a noisy decay per run, its rate depending on the run's index."""
    rng = np.random.default_rng(seed)
    x = np.arange(steps, dtype=np.float64)
    events = []
    for i, env in enumerate(names):
        rate = steps / (3 + i % 17)
        for tag in tags:
            y = np.exp(-x / rate) + rng.normal(0, 0.02, steps)
            if tag.endswith("acc"):
                y = 1 - y
            events.append({"op": "set", "env": env, "win": tag.replace("/", "_"), "kind": "line",
                           "opts": {"title": tag}, "traces": [{"name": None, "x": x.tolist(), "y": y.tolist()}]})
    return events


def log_sweep(server, names: list[str], steps: int, tags: tuple[str, ...] = TAGS, per_request: int = 300) -> None:
    """Log every run's tags through POST /api/v1/events, `per_request` events a request."""
    events = sweep_events(names, steps, tags)
    for k in range(0, len(events), per_request):
        answer = http(server, "POST", "/api/v1/events", {"events": events[k:k + per_request]})
        assert answer["errors"] == [], answer["errors"][:3]
