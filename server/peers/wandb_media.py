"""W&B media that paneboard shows: histograms, images (files beside the run) and tables (as Markdown text)."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

from paneboard.protocol import MAX_BUCKETS

MIME = {"png": "image/png", "jpg": "image/jpeg", "jpeg": "image/jpeg", "gif": "image/gif", "webp": "image/webp"}
MAX_TABLE_ROWS = 1000  # a table shown as text: the first rows say what it holds


def record(obj: dict[str, Any], files: Path, step: float, wall: float) -> tuple[str, dict[str, Any]] | None:
    """(pane kind, step record) for a logged W&B media object, or None for a kind paneboard does not show."""
    kind = obj.get("_type")
    base = {"step": step, "wall": wall}
    if kind == "histogram":
        counts, bins = obj.get("values"), obj.get("bins")
        packed = obj.get("packedBins")
        if bins is None and isinstance(packed, dict):
            bins = [packed["min"] + packed["size"] * k for k in range(int(packed["count"]) + 1)]
        if not isinstance(counts, list) or not isinstance(bins, list) or len(bins) != len(counts) + 1 \
                or not 1 <= len(counts) <= MAX_BUCKETS:
            return None
        # W&B gives n+1 edges; a paneboard (TensorBoard) bucket is named by its right edge
        return "histogram", {**base, "limits": bins[1:], "counts": counts, "min": bins[0], "max": bins[-1]}
    if kind == "image-file":
        path = files / str(obj.get("path", ""))
        mime = MIME.get(str(obj.get("format") or path.suffix.lstrip(".")).lower())
        if mime is None or not path.is_file() or files not in path.resolve().parents:
            return None
        rec = {**base, "type": "image", "data": base64.b64encode(path.read_bytes()).decode(), "mime": mime}
        if obj.get("caption") is not None:
            rec["caption"] = str(obj["caption"])
        return "media", rec
    if kind == "table-file":
        path = files / str(obj.get("path", ""))
        if not path.is_file() or files not in path.resolve().parents:
            return None
        try:
            table = json.loads(path.read_text())
        except (OSError, ValueError):
            return None
        return "media", {**base, "type": "text", "format": "markdown", "text": markdown_table(table)}
    return None


def markdown_table(table: dict[str, Any]) -> str:
    columns = [str(c) for c in table.get("columns") or []]
    rows = table.get("data") or []

    def cell(v: Any) -> str:
        return str(v).replace("|", "\\|").replace("\n", " ")

    lines = ["| " + " | ".join(map(cell, columns)) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(map(cell, row)) + " |" for row in rows[:MAX_TABLE_ROWS]]
    if len(rows) > MAX_TABLE_ROWS:
        lines.append(f"\n({len(rows) - MAX_TABLE_ROWS:,} more rows)")
    return "\n".join(lines)
