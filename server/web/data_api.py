"""Data out without Python: the runs table as Parquet and a bulk history stream of many runs × keys."""

from __future__ import annotations

import base64
import io
from collections.abc import Iterator

import numpy as np
from flask import Blueprint, Response, request

from paneboard.runs_table import columns, flatten_run

from .. import jsonio
from ..runs.series import series_name
from ..store import Store, TraceRecord
from .api import attachment
from .common import ApiError, env_visible, services
from .runs_api import _query_runs

bp = Blueprint("data_api", __name__, url_prefix="/api/v1")
MAX_SAMPLES = 1_000_000


@bp.get("/runs.parquet")
def runs_parquet() -> Response:
    """The runs matching ?q= as one Parquet table (the columns of paneboard.Api().runs())."""
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        raise ApiError(501, 'runs.parquet needs pyarrow on the server: pip install "paneboard[data]"') from None
    table = pa.table(columns([flatten_run(r) for r in _query_runs(request.args.get("q"))]))
    buf = io.BytesIO()
    pq.write_table(table, buf)
    return Response(buf.getvalue(), mimetype="application/vnd.apache.parquet",
                    headers={"Content-Disposition": attachment("runs.parquet")})


def series_of(store: Store, env: str) -> dict[str, TraceRecord]:
    """A run's series by name (the names of the runs table and of Api.history), in pane order."""
    out: dict[str, TraceRecord] = {}
    for _pane, traces in store.chart_panes([env], ("line",)).get(env, []):
        for t in traces:
            out.setdefault(series_name(_pane.win, t.name, len(traces)), t)
    return out


def _samples() -> int | None:
    raw = request.args.get("samples")
    if raw in (None, ""):
        return None
    try:
        value = int(raw)
    except ValueError:
        raise ApiError(400, "samples must be an integer") from None
    if not 4 <= value <= MAX_SAMPLES:
        raise ApiError(400, f"samples must be between 4 and {MAX_SAMPLES}")
    return value


def _f8(a: np.ndarray) -> str:
    return base64.b64encode(np.ascontiguousarray(a, dtype="<f8").tobytes()).decode()


def _line(env: str, key: str, x: np.ndarray, y: np.ndarray, wall: np.ndarray) -> bytes:
    # float64 bytes, not JSON numbers: NaN, ±inf and -0.0 come back exactly, and decode at memory speed.
    return jsonio.dumps({"env": env, "key": key, "n": len(x), "step": _f8(x), "value": _f8(y),
                         "wall": _f8(wall)}) + b"\n"


def history_lines(store: Store, envs: list[str], keys: list[str] | None, samples: int | None) -> Iterator[bytes]:
    """One NDJSON line per block of points, run by run and key by key; a block at a time is held."""
    for env in envs:
        for key, trace in series_of(store, env).items():
            if keys is not None and key not in keys:
                continue
            budget = trace.total if samples is None else samples  # exact: the budget is the full count
            if budget >= trace.total:
                for x, y, w in store.export_series(trace):
                    if len(x):
                        yield _line(env, key, x, y, w)
            else:
                s = store.read_series(trace, budget)
                yield _line(env, key, s.x, s.y, store.read_walls(trace, s.x))


@bp.get("/history")
def history() -> Response:
    """Series of many runs at once, streamed in constant memory as NDJSON: ?env= (repeated) or ?q=, ?key=
    (repeated; none: every series), ?samples= (downsampled; none: every stored point)."""
    envs = request.args.getlist("env")
    query = request.args.get("q")
    if envs and query:
        raise ApiError(400, "give env= or q=, not both")
    store = services().store
    if envs:
        missing = [e for e in envs if not env_visible(e) or store.get_env(e) is None]
        if missing:
            raise ApiError(404, f"no such run: {missing[0]}")
    else:
        envs = [r["env"] for r in _query_runs(query)]
    keys = request.args.getlist("key") or None
    return Response(history_lines(store, envs, keys, _samples()), mimetype="application/x-ndjson")
