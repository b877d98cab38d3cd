"""PR-curve panes (TensorBoard's pr_curves): TP/FP/TN/FN, precision and recall per threshold, one record per step."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from paneboard.protocol import PR_FIELDS as FIELDS

from ..commands.envelope import EventError, PaneCommand
from ..live.deltas import Deltas
from ..store import PaneRecord, StepRow, Store, StoreTx
from . import stepped
from .contract import ReadOptions, StoredStep
from .stepped import merge, mergeable  # noqa: F401  (PaneKind.merge and .mergeable)

KINDS = ("pr_curve",)
UPDATE_MODES = stepped.UPDATE_MODES
READ_OPTIONS: tuple[str, ...] = ()
MAX_THRESHOLDS = 10_000


def _check(rec: dict, where: str) -> tuple[dict, None, None]:
    data: dict = {}
    length: int | None = None
    for key in (*FIELDS, "thresholds"):
        value = rec.get(key)
        if value is None and key == "thresholds":
            continue
        try:
            arr = np.asarray(value, dtype=np.float64)
        except (TypeError, ValueError):
            raise EventError(f"{where}.{key} must be a list of numbers") from None
        if arr.ndim != 1 or not 2 <= len(arr) <= MAX_THRESHOLDS:
            raise EventError(f"{where}.{key} must be a list of 2..{MAX_THRESHOLDS} numbers")
        if length is not None and len(arr) != length:
            raise EventError(f"{where}: {key} has {len(arr)} values, expected {length} like tp")
        length = len(arr)
        # NaN precision (no positive predictions at a threshold) is kept as null: a gap in the curve.
        data[key] = [None if not np.isfinite(v) else v for v in arr.tolist()]
    assert length is not None  # tp and the other FIELDS are required, so the loop measured them
    if "thresholds" not in data:
        data["thresholds"] = np.linspace(0.0, 1.0, length).tolist()
    return data, None, None


def validate(cmd: PaneCommand, raw: dict) -> list[stepped.Rec]:
    return stepped.parse_records(cmd, raw, _check)


def _check_stored(data: dict, blob: str | None, where: str) -> None:
    if blob is not None:
        raise EventError(f"{where}: a PR-curve record has no blob")
    _check(data, where)


def check_stored(content: dict | None, steps: list[StoredStep], blobs: Mapping[str, bytes]) -> dict | None:
    return stepped.check_stored_records("pr_curve", content, steps, _check_stored)


def apply(tx: StoreTx, cmd: PaneCommand, deltas: Deltas) -> None:
    stepped.apply_records(tx, cmd, deltas)


def render_record(row: StepRow) -> dict:
    data = row.data or {}
    return {**stepped.record_head(row), **{k: data.get(k) for k in (*FIELDS, "thresholds")}}


def render(store: Store, pane: PaneRecord, budget: int, x0: float | None, x1: float | None,
           options: ReadOptions) -> dict:
    out, n = stepped.render_index(store, pane)
    out["latest"] = stepped.latest(store, pane, n, render_record)
    return out
