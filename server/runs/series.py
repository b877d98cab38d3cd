"""Series of a run: their names, which way is better (inferred from the name, or set) and the API's form."""

from __future__ import annotations

import re
from typing import Any

from ..store import SeriesRow

STATS = ("last", "min", "max", "count", "best", "last_step", "min_step", "max_step")
DIRECTIONS = ("min", "max")
# Which way is better, by the series name; the leaf name is read first, so "val/acc" is an accuracy whatever
# its prefix, and within a name a loss word wins ("acc_loss" is a loss).
_MIN_WORDS = re.compile(r"loss|err|mse|mae|rmse|nll|perplexity|ppl|wer|cer|regret|latency", re.I)
_MAX_WORDS = re.compile(r"acc|f1|precision|recall|auc|bleu|rouge|iou|dice|score|reward|return|top\d", re.I)


def infer_best(series: str) -> str | None:
    """"min" for losses and errors, "max" for accuracies and scores, None when the name does not say."""
    leaf = series.rsplit("/", 1)[-1]
    for text in (leaf, series):
        if _MIN_WORDS.search(text):
            return "min"
        if _MAX_WORDS.search(text):
            return "max"
    return None


def series_name(win: str, trace: str, ntraces: int) -> str:
    """A trace's series name: the pane's win for a lone trace or one named like it (or Visdom's default "1"),
    else "<win>/<trace>" (add_scalars' one pane with a trace per key)."""
    if ntraces == 1 or trace in (win, "1"):
        return win
    return f"{win}/{trace}"


def to_json(row: SeriesRow, direction: str | None) -> dict[str, Any]:
    """{"last", "last_step", "min", "min_step", "max", "max_step", "count", "best", "direction"}."""
    best = row.min_y if direction == "min" else row.max_y if direction == "max" else None
    return {"last": row.last_y, "last_step": row.last_x, "min": row.min_y, "min_step": row.min_x, "max": row.max_y,
            "max_step": row.max_x, "count": row.count, "best": best, "direction": direction}


def summaries_by_env(rows: list[SeriesRow], best: dict[str, dict]) -> dict[str, dict[str, dict[str, Any]]]:
    """env -> series name -> summary; `best` holds each env's directions set by a user (else inferred)."""
    out: dict[str, dict[str, dict[str, Any]]] = {}
    for r in rows:
        name = series_name(r.win, r.trace, r.ntraces)
        chosen = best.get(r.env, {}).get(name)
        out.setdefault(r.env, {})[name] = to_json(r, chosen if chosen in DIRECTIONS else infer_best(name))
    return out
