"""Table panes (W&B's wandb.Table): named columns of numbers, text, booleans and small pictures, sorted in the browser."""

from __future__ import annotations

import base64
import math
from collections.abc import Mapping
from typing import Any

from ..commands.envelope import EventError, PaneCommand
from ..live.deltas import Deltas
from ..store import PaneRecord, Store, StoreTx
from .common import no_steps, replace_content, stored_object
from .contract import ReadOptions, StoredStep
from .image import decode_image

KINDS = ("table",)
UPDATE_MODES = ("replace",)
READ_OPTIONS: tuple[str, ...] = ()
mergeable = merge = None  # each event is applied on its own
render_record = None  # not a stepped kind: the latest table is shown (W&B's too)
MAX_COLUMNS = 1000
MAX_ROWS = 100_000
MAX_CELL_TEXT = 10_000
MAX_PICTURE_BYTES = 1 << 20  # per picture cell: thumbnails, not a store of full images (use media panes)
MAX_TABLE_BYTES = 16 << 20  # the pictures of one table, in all


def validate(cmd: PaneCommand, raw: dict) -> dict:
    return check_table(raw.get("table"))


def check_table(table: object) -> dict:
    """{"columns": [names], "rows": [[cell per column]]}; a cell is null, a bool, a finite number (others: null),
    text, or {"image": {"mime", "data": <base64>, "caption"?}} (width and height are added here)."""
    if not isinstance(table, dict):
        raise EventError("table: expected {columns: [...], rows: [[...]]}")
    columns, rows = table.get("columns"), table.get("rows")
    if not isinstance(columns, list) or not 1 <= len(columns) <= MAX_COLUMNS or \
            not all(isinstance(c, str) and 0 < len(c) <= 256 for c in columns):
        raise EventError(f"table: columns must be 1..{MAX_COLUMNS} names of 1..256 characters")
    if not isinstance(rows, list) or len(rows) > MAX_ROWS:
        raise EventError(f"table: rows must be a list of at most {MAX_ROWS} rows")
    budget = [MAX_TABLE_BYTES]
    out = []
    for i, row in enumerate(rows):
        if not isinstance(row, list) or len(row) != len(columns):
            raise EventError(f"table: row {i} must hold one cell per column ({len(columns)})")
        out.append([_cell(v, f"table: row {i}, column {columns[k]!r}", budget) for k, v in enumerate(row)])
    return {"columns": list(columns), "rows": out}


def _cell(v: Any, where: str, budget: list[int]) -> Any:
    if v is None or isinstance(v, bool):
        return v
    if isinstance(v, (int, float)):
        return v if math.isfinite(v) else None
    if isinstance(v, str):
        if len(v) > MAX_CELL_TEXT:
            raise EventError(f"{where}: text longer than {MAX_CELL_TEXT} characters")
        return v
    if isinstance(v, dict) and set(v) == {"image"} and isinstance(v["image"], dict):
        data, mime, width, height = decode_image(v["image"], where)
        budget[0] -= len(data)
        if len(data) > MAX_PICTURE_BYTES or budget[0] < 0:
            raise EventError(f"{where}: pictures are limited to {MAX_PICTURE_BYTES} bytes each and "
                             f"{MAX_TABLE_BYTES} per table")
        caption = v["image"].get("caption")
        picture: dict[str, Any] = {"mime": mime, "data": base64.b64encode(data).decode("ascii"), "width": width,
                                   "height": height}
        if caption is not None:
            picture["caption"] = str(caption)[:MAX_CELL_TEXT]
        return {"image": picture}
    raise EventError(f"{where}: a cell must be null, a bool, a number, text or {{image: {{mime, data}}}}")


def check_stored(content: dict | None, steps: list[StoredStep], blobs: Mapping[str, bytes]) -> dict | None:
    no_steps("table", steps)
    return check_table(stored_object(content, "table", ("columns", "rows")))


def apply(tx: StoreTx, cmd: PaneCommand, deltas: Deltas) -> None:
    replace_content(tx, cmd, deltas, "table", KINDS)


def render(store: Store, pane: PaneRecord, budget: int, x0: float | None, x1: float | None,
           options: ReadOptions) -> dict:
    content = pane.content or {}
    return {"columns": content.get("columns", []), "rows": content.get("rows", [])}
