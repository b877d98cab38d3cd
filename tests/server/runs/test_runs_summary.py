"""Series summaries kept from new points only equal the summary of the whole series; directions by name."""

from __future__ import annotations

import numpy as np
import pytest

from paneboard.server.runs.series import infer_best, series_name
from paneboard.server.store.summary import Summary, update


def test_incremental_summary_equals_the_whole_series():
    rng = np.random.default_rng(0)
    for _ in range(20):
        parts = []
        s = Summary()
        for _ in range(int(rng.integers(1, 8))):
            n = int(rng.integers(0, 50))
            x = np.arange(n, dtype=np.float64) + sum(len(p[0]) for p in parts)
            y = rng.normal(size=n).round(1)  # rounded: ties, so "the first step reaching it" is tested
            y[rng.random(n) < 0.1] = np.nan
            y[rng.random(n) < 0.05] = np.inf
            parts.append((x, y))
            s = update(s, x, y)
        x = np.concatenate([p[0] for p in parts])
        y = np.concatenate([p[1] for p in parts])
        ok = np.isfinite(y)
        assert s.count == int(ok.sum())
        if not ok.any():
            assert s == Summary()
            continue
        xs, ys = x[ok], y[ok]
        assert (s.last_x, s.last_y) == (xs[-1], ys[-1])
        assert (s.min_x, s.min_y) == (xs[np.argmin(ys)], ys.min())
        assert (s.max_x, s.max_y) == (xs[np.argmax(ys)], ys.max())


@pytest.mark.parametrize("name, best", [("loss", "min"), ("train/loss", "min"), ("val/acc", "max"), ("top1_err", "min"),
                                        ("f1", "max"), ("eval/accuracy", "max"), ("lr", None), ("acc_loss", "min"),
                                        ("loss/val_acc", "max"), ("reward", "max")])
def test_best_direction_by_name(name, best):
    assert infer_best(name) == best


def test_series_names():
    assert series_name("loss", "1", 1) == "loss"
    assert series_name("loss", "train", 1) == "loss"
    assert series_name("loss", "train", 2) == "loss/train"
    assert series_name("loss", "1", 2) == "loss"
