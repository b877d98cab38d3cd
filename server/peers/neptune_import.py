"""Neptune exporter Parquet (neptune-ai/neptune-exporter) into envs: one row per attribute value or point, in the
exporter's published schema (project_id, run_id, attribute_path, attribute_type, step, timestamp, *_value)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from .sink import PeerImportError, Progress, Sink, client_id, need, tag_text

# The exporter writes <data path>/<project>/<run>_part_<n>.parquet, one run per file (parts in order).
PART = re.compile(r"^(?P<run>.+)_part_(?P<n>\d+)\.parquet$")
NEEDED = {"project_id", "run_id", "attribute_path", "attribute_type", "step", "timestamp", "float_value"}
PARAM_TYPES = {"float": "float_value", "int": "int_value", "string": "string_value", "bool": "bool_value",
               "datetime": "datetime_value", "string_set": "string_set_value"}


def _parts(path: Path) -> list[Path]:
    if path.is_file():
        return [path] if PART.match(path.name) else []
    return sorted(p for p in path.rglob("*_part_*.parquet") if PART.match(p.name))


def is_neptune(path: Path) -> bool:
    found = _parts(path)
    if not found:
        return False
    try:
        pq = need("pyarrow.parquet", "data")
        return NEEDED <= set(pq.read_schema(found[0]).names)
    except (PeerImportError, OSError, ValueError):
        return bool(found)  # the import then names what is missing


def runs(path: Path) -> dict[tuple[str, str], list[Path]]:
    """(project folder, run file prefix) -> its parts in part order."""
    out: dict[tuple[str, str], list[tuple[int, Path]]] = {}
    for p in _parts(path):
        m = PART.match(p.name)
        assert m is not None
        out.setdefault((p.parent.name, m["run"]), []).append((int(m["n"]), p))
    return {k: [p for _, p in sorted(v)] for k, v in sorted(out.items())}


def import_neptune(sink: Sink, path: Path, progress: Progress | None = None) -> None:
    pa = need("pyarrow", "data")
    pq = need("pyarrow.parquet", "data")
    found = runs(path)
    if not found:
        raise PeerImportError(f"{path}: no Neptune exporter parts (<run>_part_<n>.parquet)")
    for k, ((_project, prefix), parts) in enumerate(found.items()):
        if progress:
            progress(k, len(found), prefix)
        try:
            table = pa.concat_tables([pq.read_table(p) for p in parts], promote_options="permissive")
        except (OSError, ValueError) as exc:
            raise PeerImportError(f"{parts[0]}: not readable as Parquet: {exc}") from None
        missing = NEEDED - set(table.column_names)
        if missing:
            raise PeerImportError(f"{parts[0]}: not a Neptune export (no column {', '.join(sorted(missing))})")
        import_run(sink, table, sum(p.stat().st_size for p in parts))
    if progress:
        progress(len(found), len(found), "done")


def _seconds(column: Any) -> np.ndarray:
    """A timestamp column as Unix seconds (float64; NaN where null)."""
    pa = need("pyarrow", "data")
    ms = column.cast(pa.timestamp("ms", tz="UTC")).cast(pa.int64())
    return ms.to_numpy(zero_copy_only=False).astype(np.float64) / 1000.0


def _float(column: Any) -> np.ndarray:
    pa = need("pyarrow", "data")
    return column.cast(pa.float64()).fill_null(np.nan).to_numpy(zero_copy_only=False)


def _params(table: Any) -> Iterator[tuple[str, str, Any]]:
    pc = need("pyarrow.compute", "data")
    rows = table.filter(pc.is_in(table["attribute_type"], value_set=need("pyarrow", "data").array(list(PARAM_TYPES))))
    for row in rows.to_pylist():
        value = row.get(PARAM_TYPES[row["attribute_type"]])
        if row["attribute_type"] == "datetime" and value is not None:
            value = value.timestamp()
        yield row["attribute_path"], row["attribute_type"], value


def import_run(sink: Sink, table: Any, size: int) -> str:
    pc = need("pyarrow.compute", "data")
    project, run_id = table["project_id"][0].as_py(), table["run_id"][0].as_py()
    source = f"neptune:{project}/{run_id}"
    config: dict[str, Any] = {}
    sys: dict[str, Any] = {}
    for path, _kind, value in _params(table):
        if path.startswith("sys/"):
            sys[path[4:]] = value
        else:
            config[path] = value
    name = sys.get("name") or sys.get("custom_run_id") or run_id
    env = sink.env_for(f"{project}/{name}", source)
    started = sys.get("creation_time")
    ended = sys.get("modification_time") or sys.get("ping_time")
    status = "failed" if sys.get("failed") else "running" \
        if str(sys.get("state", "")).lower() in ("active", "running") else "finished"
    provenance = {"source": "neptune", "import": source, "neptune": {"project": project, "run_id": run_id},
                  **({"user": sys["owner"]} if sys.get("owner") else {})}
    record = {"op": "run_import", "env": env, "status": status, "started": started,
              "ended": ended if status != "running" else None, "provenance": provenance,
              "tags": [t for t in map(tag_text, sorted(sys.get("tags") or [])) if t],
              "notes": sys.get("description") or "", "error": None}
    sink.events(client_id(source, "record"), size,
                [record, {"op": "run_config", "env": env, "config": config, "replace": True}])
    series = table.filter(pc.equal(table["attribute_type"], "float_series"))
    for key in sorted(set(series["attribute_path"].to_pylist())):
        one = series.filter(pc.equal(series["attribute_path"], key))
        one = one.take(pc.sort_indices(one, sort_keys=[("step", "ascending")]))  # stable: equal steps keep order
        sink.series(env, key, client_id(source, "series", key), _float(one["step"]), _float(one["float_value"]),
                    _seconds(one["timestamp"]), "step")
    sink.stats.runs += 1
    return env
