"""paneboard.Api: read runs and their series back as pandas DataFrames (or lists of dicts) and export them."""

from __future__ import annotations

import base64
import json
import os
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import orjson

from .runs_table import columns, flatten_run

DEFAULT_SERVER = "http://localhost:8097"
EXPORT_BATCH = 1 << 20  # points per Parquet row group / CSV write: big enough to be fast, small enough to stay flat


class ApiError(RuntimeError):
    """The server refused a read (its message), or could not be reached."""


def _pandas() -> Any:
    try:
        import pandas  # type: ignore[import-untyped]  # (pandas-stubs is not a dependency)
    except ImportError:
        return None
    return pandas


def _decode(text: str) -> np.ndarray:
    return np.frombuffer(base64.b64decode(text), dtype="<f8")


class Api:
    """Api(server="http://host:8097", token=None): the runs table, series and exports of one server.

    `server` defaults to $PANEBOARD_SERVER, then http://localhost:8097; `url` is the same argument by its
    other name. With pandas installed (`pip install "paneboard[data]"`) reads return DataFrames, else lists of
    dicts.
    """

    def __init__(self, server: str | None = None, token: str | None = None, *, url: str | None = None,
                 timeout: float = 60.0) -> None:
        base = server or url or os.environ.get("PANEBOARD_SERVER") or DEFAULT_SERVER
        if "://" not in base:
            base = "http://" + base
        self.server = base.rstrip("/")
        self.token = token if token is not None else os.environ.get("PANEBOARD_TOKEN")
        self.timeout = timeout

    def __repr__(self) -> str:
        return f"Api(server={self.server!r})"

    def _open(self, path: str, params: list[tuple[str, Any]]) -> Any:
        query = urllib.parse.urlencode([(k, v) for k, v in params if v not in (None, "")])
        req = urllib.request.Request(f"{self.server}/api/v1/{path}" + (f"?{query}" if query else ""))
        if self.token:
            req.add_header("Authorization", f"Bearer {self.token}")
        try:
            return urllib.request.urlopen(req, timeout=self.timeout)
        except urllib.error.HTTPError as exc:
            try:
                message = json.loads(exc.read()).get("error", "")
            except ValueError:
                message = ""
            raise ApiError(f"{self.server}: {exc.code} {message or exc.reason}") from None
        except OSError as exc:
            raise ApiError(f"{self.server}: {exc}") from None

    def _run_rows(self, query: str) -> list[dict[str, Any]]:
        with self._open("runs", [("q", query)]) as r:
            return [flatten_run(run) for run in json.loads(r.read())["runs"]]

    def runs(self, query: str = "", columns: list[str] | None = None) -> Any:
        """One row per run matching `query` (the /runs query language): env, name, status, times, tags, host,
        user, commit, config.<key>, and <series>.<last|min|max|count|best>; `columns` picks some."""
        rows = self._run_rows(query)
        pd = _pandas()
        if columns is not None:
            rows = [{k: r.get(k) for k in ["env", *[c for c in columns if c != "env"]]} for r in rows]
        if pd is None:
            return rows
        return pd.DataFrame(_columns(rows, columns))

    def iter_history(self, runs: list[str] | None = None, keys: list[str] | None = None, samples: int | None = None,
                     query: str | None = None) -> Iterator[tuple[str, str, np.ndarray, np.ndarray, np.ndarray]]:
        """(run, key, step, value, wall) blocks of float64 arrays, streamed: many runs in constant memory."""
        params: list[tuple[str, Any]] = [("env", e) for e in runs or []] + [("key", k) for k in keys or []]
        params += [("samples", samples)] if runs else [("q", query or ""), ("samples", samples)]
        with self._open("history", params) as r:
            for line in r:
                block = orjson.loads(line)
                yield (block["env"], block["key"], _decode(block["step"]), _decode(block["value"]),
                       _decode(block["wall"]))

    def history(self, run: Any, keys: list[str] | str | None = None, samples: int | None = None) -> Any:
        """One run's series: step, wall and a column per key, every stored point unless `samples` asks for a
        downsampled read. `run` is an env name or a row of runs()."""
        env = run if isinstance(run, str) else run["env"]
        wanted = [keys] if isinstance(keys, str) else keys
        parts: dict[str, list[tuple[np.ndarray, np.ndarray, np.ndarray]]] = {}
        for _env, key, x, y, w in self.iter_history([env], wanted, samples):
            parts.setdefault(key, []).append((x, y, w))
        series = {k: (np.concatenate([p[0] for p in v]), np.concatenate([p[1] for p in v]),
                      np.concatenate([p[2] for p in v])) for k, v in parts.items()}
        pd = _pandas()
        if pd is None:
            return _history_dicts(series)
        frame = None
        for key, (x, y, w) in series.items():
            part = pd.DataFrame({"step": x, "wall": w, key: y})
            if frame is None:
                frame = part
            else:  # keys logged at other steps: an outer join on step, one wall per row
                frame = frame.merge(part, on="step", how="outer", suffixes=("", "_r"), sort=True)
                frame["wall"] = frame["wall"].fillna(frame.pop("wall_r"))
        return frame if frame is not None else pd.DataFrame({"step": [], "wall": []})

    def export(self, path: str | os.PathLike, query: str = "", format: str = "parquet") -> dict[str, int]:
        """Write every matching run's table (runs.<fmt>) and series (history.<fmt>: env, key, step, wall, value)
        into the folder `path`, streaming; returns {"runs", "points"}."""
        if format not in ("parquet", "csv"):
            raise ValueError('format must be "parquet" or "csv"')
        if format == "parquet":
            try:
                import pyarrow as pa
                import pyarrow.parquet as pq
            except ImportError:
                raise ImportError('Api.export(format="parquet") needs pyarrow: pip install "paneboard[data]"') from None
        out = Path(path)
        out.mkdir(parents=True, exist_ok=True)
        rows = self._run_rows(query)
        if format == "parquet":
            pq.write_table(pa.table(columns(rows)), out / "runs.parquet")
        else:
            _write_csv(out / "runs.csv", columns(rows))
        writer = _ParquetHistory(out / "history.parquet") if format == "parquet" else _CsvHistory(out / "history.csv")
        points = 0
        try:
            envs = [r["env"] for r in rows]
            for k in range(0, len(envs), 200):  # a few URLs, not one of every run's name
                for env, key, x, y, w in self.iter_history(envs[k:k + 200]):
                    writer.add(env, key, x, y, w)
                    points += len(x)
        finally:
            writer.close()
        return {"runs": len(rows), "points": points}


def _columns(rows: list[dict[str, Any]], wanted: list[str] | None) -> dict[str, list[Any]]:
    return columns(rows, ["env", *[c for c in wanted if c != "env"]] if wanted is not None else None)


def _history_dicts(series: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]) -> list[dict[str, Any]]:
    by_step: dict[float, dict[str, Any]] = {}
    for key, (x, y, w) in series.items():
        for step, value, wall in zip(x.tolist(), y.tolist(), w.tolist(), strict=True):
            row = by_step.setdefault(step, {"step": step, "wall": wall})
            row[key] = value
    return [by_step[s] for s in sorted(by_step)]


def _write_csv(path: Path, cols: dict[str, list[Any]]) -> None:
    import csv

    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(list(cols))
        w.writerows(zip(*cols.values(), strict=True))


class _ParquetHistory:
    """history.parquet written a row group at a time (a batch of blocks), so memory stays flat."""

    def __init__(self, path: Path) -> None:
        import pyarrow as pa
        import pyarrow.parquet as pq

        self.pa = pa
        # env and key as dictionaries: one string per block rather than one per point (a flat RSS)
        text = pa.dictionary(pa.int32(), pa.string())
        self.schema = pa.schema([("env", text), ("key", text), ("step", pa.float64()), ("wall", pa.float64()),
                                 ("value", pa.float64())])
        self.writer = pq.ParquetWriter(path, self.schema)
        self.parts: list[Any] = []
        self.n = 0

    def add(self, env: str, key: str, x: np.ndarray, y: np.ndarray, w: np.ndarray) -> None:
        pa = self.pa
        n = len(x)
        zeros = np.zeros(n, "i4")
        self.parts.append(pa.table({"env": pa.DictionaryArray.from_arrays(zeros, pa.array([env])),
                                    "key": pa.DictionaryArray.from_arrays(zeros, pa.array([key])),
                                    "step": x, "wall": w, "value": y}, schema=self.schema))
        self.n += n
        if self.n >= EXPORT_BATCH:
            self._flush()

    def _flush(self) -> None:
        if self.parts:
            self.writer.write_table(self.pa.concat_tables(self.parts).unify_dictionaries())
        self.parts, self.n = [], 0

    def close(self) -> None:
        self._flush()
        self.writer.close()


class _CsvHistory:
    def __init__(self, path: Path) -> None:
        self.f = open(path, "w")  # noqa: SIM115 (closed by close())
        self.f.write("env,key,step,wall,value\n")

    def add(self, env: str, key: str, x: np.ndarray, y: np.ndarray, w: np.ndarray) -> None:
        prefix = json.dumps(env) + "," + json.dumps(key) + ","
        # repr of a float64 round-trips exactly
        self.f.write("".join(f"{prefix}{a!r},{b!r},{c!r}\n" for a, b, c in zip(x.tolist(), w.tolist(), y.tolist(),
                                                                              strict=True)))

    def close(self) -> None:
        self.f.close()
