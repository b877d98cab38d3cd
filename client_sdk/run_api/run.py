"""paneboard.Run: W&B's run object (log, define_metric, summary, finish) as a thin layer over one Client."""

from __future__ import annotations

import atexit
import fnmatch
import logging
from collections.abc import Mapping
from time import time as _now
from typing import Any

import numpy as np

from ..protocol import TB_XLABEL
from ..transport.points import prefix as point_prefix
from ..transport.rows import RowSchema
from .media import Histogram, Media, Table
from .metrics import MetricRules, is_glob, spec_of
from .state import Config, Summary

log = logging.getLogger("paneboard")
_PLAIN_TYPES = frozenset((float, int))  # values the hot path queues as they are (bool is not among them)


class Run:
    """One run: `env` is `project/name`. A step not given to log() advances by one per committed call, as
    W&B's does; commit=False keeps the next call on the same step. Logging never raises: bad values are
    counted in `rejected` (client.rejected) with one warning."""

    def __init__(self, client: Any, env: str, name: str, project: str | None, run_id: str, run_dir: str,
                 mode: str, config: Config) -> None:
        self.client, self.env, self.name, self.project, self.id, self.dir = client, env, name, project, run_id, run_dir
        self.mode = mode
        self.config = config
        self._step = 0
        self._last: dict[str, Any] = {}
        self.summary = Summary(self._last, None if client is None else client.set_config, self._settle_summary)
        config._bind(None if client is None else client.set_config)
        # key -> point prefix of the keys logged as plain points at the run's step
        self._plain: dict[str, bytes] = {}
        # the keys of a row whose every key is plain -> its schema: such a row with float/int values is queued
        # whole, with no per-key Python work (the hot path; the sender thread splits it)
        self._rows: dict[tuple, RowSchema] = {}
        self._x_of: dict[str, str] = {}  # key -> the key whose value is its x (define_metric step_metric)
        self._agg: dict[str, str] = {}  # key -> min/max/mean summary (define_metric summary)
        self._counts: dict[str, int] = {}
        self._rules = MetricRules()  # define_metric's declarations, read as the W&B importer reads a run's
        self._watches: list[Any] = []
        self._put_point = None if client is None else client.transport.put_point
        self._put_row = None if client is None else client.transport.put_row
        self._row: dict[str, Any] | None = None  # the current step's values, until committed
        self._row_wall = 0.0
        if client is not None:
            # A script that ends without finish() (W&B finishes runs at exit) still sends its last step's row;
            # registered after the Client's own exit handlers, so it runs before they close the connection.
            atexit.register(self._send_row)
        self.finished = client is None
        self.on_finish: Any = None  # the module-level API's: a finished run is no longer the current one

    # ----------------------------------------------------------------------------------- W&B attributes
    @property
    def step(self) -> int:
        return self._step

    @property
    def path(self) -> str:
        return self.env

    @property
    def entity(self) -> str | None:
        return None

    @property
    def url(self) -> str | None:
        if self.client is None:
            return None
        from urllib.parse import quote

        return self.client.url.replace("ws", "http", 1).rsplit("/ingest", 1)[0] + "/env/" + quote(self.env, safe="")

    @property
    def rejected(self) -> int:
        return 0 if self.client is None else self.client.rejected

    def __repr__(self) -> str:
        return f"<paneboard.Run {self.env!r} mode={self.mode}>"

    # ---------------------------------------------------------------------------------------- logging
    def log(self, data: Mapping[str, Any], step: int | None = None, commit: bool | None = None,
            sync: bool | None = None) -> None:
        """Log a dict of values at `step` (default: the run's step). Numbers are points of line pane <key>;
        nested dicts become "a/b" keys; arrays are histograms; media objects records of their pane."""
        put_row = self._put_row
        if put_row is None:
            return
        if type(data) is not dict:
            if not isinstance(data, Mapping):
                self._reject(f"log() takes a dict of values, got {type(data).__name__}")
                return
            data = dict(data)
        if step is not None:
            if type(step) is not int:
                try:
                    step = int(step)
                except (TypeError, ValueError):
                    self._reject(f"log(step=...) must be an integer, got {step!r}")
                    return
            if step < self._step:
                self._reject(f"log(step={step}) is before the run's current step {self._step}: data dropped "
                             "(steps must not go backwards, as in W&B)")
                return
            if step > self._step:
                self._send_row()  # the earlier step's row is complete
                self._step = step
        # The step's row accumulates until it is committed (W&B: commit=True, or no step given) or a later step
        # is logged: a key logged twice in one step keeps its last value.
        row = self._row
        if row is None:
            self._row = data if commit or (commit is None and step is None) else data.copy()
        else:
            row.update(data)
        self._row_wall = _now()
        if commit or (commit is None and step is None):
            x = self._step
            self._send_row()
            self._step = x + 1
            for w in self._watches:
                w.step(x)

    def _settle_summary(self) -> None:
        """The summary's last values include the step not yet sent (its plain numbers and strings)."""
        for k, v in (self._row or {}).items():
            if isinstance(k, str) and k not in self._agg and not isinstance(v, (Mapping, Media)):
                value = v if isinstance(v, str) else _number(v)
                if value is not None:
                    self._last[k] = value

    def _send_row(self) -> None:
        """Send the current step's accumulated row: whole, when every key is a known plain number (the hot path)."""
        data = self._row
        if data is None or self._put_row is None:
            return
        self._row = None
        x, t = self._step, self._row_wall
        schema = self._rows.get(tuple(data))
        if schema is not None and set(map(type, data.values())) <= _PLAIN_TYPES:
            self._put_row(schema, x, tuple(data.values()), t)  # type: ignore[misc]
            self._last.update(data)
            return
        try:
            self._log_row(data, x, t)
        except Exception as exc:  # nothing logged may raise into the training loop
            self._reject(f"log(): {exc}")

    def _log_row(self, data: dict[str, Any], x: int, t: float) -> None:
        """The slow path: the plain keys' numbers still go out as one row; every other key alone (_log_value)."""
        keys: list[str] = []
        values: list[float] = []
        for k, v in data.items():
            key = str(k)
            if key in self._plain and not isinstance(v, (Mapping, Media, str)) and v is not None:
                value = _number(v)
                if value is not None:
                    keys.append(key)
                    values.append(value)
                    self._last[key] = value
                    continue
            self._log_value(key, v, x, t, data)
        if not keys:
            return
        if len(keys) == len(data) and all(isinstance(k, str) for k in data):
            schema = self._rows.get(tuple(keys))  # a row of these keys can take the hot path next time
            if schema is None:
                schema = self._rows[tuple(keys)] = self._schema(tuple(keys))
        else:
            schema = self._schema(tuple(keys))
        self._put_row(schema, x, tuple(values), t)  # type: ignore[misc]

    def _schema(self, keys: tuple[str, ...]) -> RowSchema:
        if len(self._rows) >= 1024:
            self._rows.clear()
        return RowSchema(self.env, keys, [self._pane(key, None) for key in keys])

    def _log_value(self, key: str, v: Any, x: int, t: float, row: Mapping[str, Any]) -> None:
        """A key seen for the first time, a non-number value, a nested dict or a media object."""
        if isinstance(v, Mapping):
            for k2, v2 in v.items():
                self._log_value(f"{key}/{k2}", v2, x, t, row)
            return
        if v is None:
            return
        if isinstance(v, Table):
            # A table pane: the latest table (W&B shows the latest too), logged at this step
            self.client.transport.put({"t": t, "op": "set", "env": self.env, "win": key, "kind": "table",
                                       "opts": {"title": key, "step": x}, "table": v.wire()})
            return
        if isinstance(v, Media):
            rec = v.record()
            self._records("histogram" if isinstance(v, Histogram) else v.kind, key, rec, x, t)
            return
        if isinstance(v, (list, tuple)) and v and all(isinstance(m, Media) for m in v):
            for m in v:  # W&B's list of images per step: each a record of the key's pane at this step
                self._log_value(key, m, x, t, row)
            return
        if isinstance(v, str):
            self._last[key] = v  # W&B keeps strings in the summary; there is nothing to plot
            return
        value = _number(v)
        if value is None:
            arr = np.asarray(v.detach().cpu() if hasattr(v, "detach") else v)
            if arr.dtype.kind in "fiub" and arr.ndim >= 1:
                self._records("histogram", key, Histogram(arr).record(), x, t)
                return
            raise TypeError(f"{key!r}: cannot log a {type(v).__name__}")
        if key not in self._plain and key not in self._x_of and key not in self._agg:
            self._first_seen(key)
        xkey = self._x_of.get(key)
        px: float = x
        if xkey is not None:
            xv = row.get(xkey, self._last.get(xkey))
            num = _number(xv) if xv is not None else None
            if num is None:
                return  # W&B drops a point whose step metric has no value yet
            px = num
        self._put_point(self._prefix(key, xkey), px, value, t)  # type: ignore[misc]
        self._summarise(key, value)

    def _summarise(self, key: str, value: float) -> None:
        agg = self._agg.get(key)
        n = self._counts[key] = self._counts.get(key, 0) + 1
        old = self._last.get(key)
        if agg == "min" and old is not None:
            value = min(old, value)
        elif agg == "max" and old is not None:
            value = max(old, value)
        elif agg == "mean" and old is not None:
            value = old + (value - old) / n
        self._last[key] = value

    def _first_seen(self, key: str) -> None:
        if self._rules.spec(key) is not None:
            self._apply_metric(key)
        else:
            self._plain[key] = self._prefix(key, None)

    def _pane(self, key: str, xkey: str | None) -> dict[str, Any]:
        return {"win": key, "kind": "line", "name": key, "opts": {"title": key, "xlabel": xkey or TB_XLABEL},
                "traces": [{"name": key, "style": {"mode": "lines"}}]}

    def _prefix(self, key: str, xkey: str | None) -> bytes:
        return point_prefix({"op": "update", "env": self.env, "mode": "append", **self._pane(key, xkey)})

    def _records(self, kind: str, key: str, rec: dict[str, Any], x: int, t: float) -> None:
        rec["step"], rec["wall"] = x, t
        self.client.transport.put({"t": t, "op": "update", "env": self.env, "win": key, "kind": kind,
                                   "mode": "append", "name": None, "opts": {"title": key}, "records": [rec]})

    def _reject(self, why: str) -> None:
        if self.client is not None:
            self.client.transport.reject(why)

    # ------------------------------------------------------------------------------------- metrics
    def define_metric(self, name: str, step_metric: str | None = None, step_sync: bool | None = None,
                      hidden: bool | None = None, summary: str | None = None, goal: str | None = None,
                      overwrite: bool | None = None, **_: Any) -> None:
        """x axis (`step_metric`), summary ("min", "max", "mean", "last"; comma-separated: the first) and goal
        ("minimize"/"maximize": the run's best direction) of a metric, or of every key matching a glob."""
        if not isinstance(name, str):
            raise TypeError(f"define_metric: name must be a string, got {type(name).__name__}")
        try:
            spec = spec_of(step_metric, step_sync, hidden, summary, goal)
        except ValueError as exc:
            self._reject(f"define_metric({name!r}): {exc}")
            return
        self._rules.define(name, spec)
        if self.client is None:
            return
        for key in [k for k in self._plain if fnmatch.fnmatchcase(k, name)] if is_glob(name) else [name]:
            self._apply_metric(key)

    def _apply_metric(self, key: str) -> None:
        spec = self._rules.spec(key)
        if spec is None:
            return
        self._plain.pop(key, None)  # off the hot path: its x or summary needs work per point
        self._rows.clear()
        self._x_of.pop(key, None)
        self._agg.pop(key, None)
        xkey = self._rules.x_of(key)
        if xkey is not None:
            self._x_of[key] = xkey
        if spec.aggregate is not None:
            self._agg[key] = spec.aggregate
        if spec.direction is not None:
            self.client.set_best(key, spec.direction)
        if key not in self._x_of and key not in self._agg:
            self._plain[key] = self._prefix(key, None)

    # --------------------------------------------------------------------------- hooks, files, alerts
    def watch(self, models: Any, criterion: Any = None, log: str | None = "gradients", log_freq: int = 1000,
              idx: int | None = None, log_graph: bool = False) -> Any:
        """Norms (and with log="all"/"gradients"/"parameters" histograms) of the model every log_freq steps."""
        if self.client is None or log is None:
            return None
        from ..hooks import watch as hooks_watch

        hist = 4 if log in ("gradients", "all", "parameters") else 0
        out = [hooks_watch(m, self.client, every=max(int(log_freq), 1), histograms=hist)
               for m in (models if isinstance(models, (list, tuple)) else [models])]
        self._watches.extend(out)
        return out[0] if len(out) == 1 else out

    def unwatch(self, models: Any = None) -> None:
        self._watches.clear()

    def alert(self, title: str, text: str, level: Any = None, wait_duration: Any = None) -> None:
        """A row in the run's alerts pane with the alert's title, level and text."""
        if self.client is not None:
            from ..hooks import alerts

            lvl = getattr(level, "value", level) or "INFO"
            alerts.get(self.client).alert(str(title), self.step, f"[{lvl}] {text}")

    def log_artifact(self, artifact_or_path: Any, name: str | None = None, type: str | None = None,  # noqa: A002
                     aliases: Any = None, tags: Any = None) -> Any:
        from .artifact import log_artifact

        return log_artifact(self, artifact_or_path, name, type, aliases)

    def use_artifact(self, artifact_or_name: Any, type: str | None = None, aliases: Any = None) -> Any:  # noqa: A002
        from .artifact import use_artifact

        return use_artifact(self, artifact_or_name)

    def save(self, glob_str: str | None = None, base_path: str | None = None, policy: str = "live") -> list[str]:
        """Not supported: says so and returns []; files are kept with log_artifact(path)."""
        log.warning("paneboard: save(%r) is not supported: keep files with log_artifact(path, type=...)", glob_str)
        return []

    # ---------------------------------------------------------------------------------------- end
    def finish(self, exit_code: int | None = None, quiet: bool | None = None) -> None:
        """End the run (failed when exit_code is non-zero), deliver what is queued and close the connection."""
        if self.finished:
            return
        self._send_row()
        atexit.unregister(self._send_row)
        self.finished = True
        self._put_point = self._put_row = None
        if exit_code:
            self.client.end_run(f"exit code {exit_code}")
        self.client.close_connection()
        if self.on_finish is not None:
            self.on_finish(self)

    def __enter__(self) -> Run:
        return self

    def __exit__(self, kind: Any, value: Any, tb: Any) -> None:
        if kind is not None and not self.finished:
            import traceback

            self.client.end_run("".join(traceback.format_exception(kind, value, tb)))
        self.finish()


def _number(v: Any) -> float | None:
    """A float of a number, a numpy/torch scalar or a one-element array; None otherwise."""
    if isinstance(v, (bool, int, float)):
        return float(v)
    if getattr(v, "ndim", None) == 0 or (hasattr(v, "numel") and v.numel() == 1) or \
            (isinstance(v, np.ndarray) and v.size == 1):
        try:
            return float(v.item())
        except (TypeError, ValueError):
            return None
    if isinstance(v, np.generic):
        return float(v)
    return None

