"""Which committed changes are worth a notification, and the event (with its de-duplication key) of each."""

from __future__ import annotations

import hashlib
import html
import re
import time
from typing import Any
from urllib.parse import quote

import numpy as np

from ..commands.envelope import Command
from ..dispatch.parse import parse_event
from ..store import Store
from . import payload

RUN_EVENTS = ("crashed", "failed", "finished", "stalled", "running")  # running: only to see a stall end
ALERTS_WIN = "alerts"  # the pane the SDK hooks' alerts (and the server's stall watch) append rows to
_TAG = re.compile(r"<[^>]+>")
DROPPED = "notifications dropped"  # the rows the notifier itself writes: counted there, never notified again
ALERT_ROWS_SETTING = "notify.alert_rows:"  # + env: rows of its alerts pane already notified (outlives a restart)


def interesting(m: dict[str, Any]) -> bool:
    """Cheap enough for the writer thread, which hands every committed batch to the notifier."""
    kind = m.get("type")
    if kind == "run":
        return (m.get("run") or {}).get("status") in RUN_EVENTS
    if kind == "extend":
        return any(not np.isfinite(np.asarray(t["y"], dtype=np.float64)).all() for t in m.get("traces") or ())
    return kind == "pane"  # the alerts pane, or a pane just created (its first points came with it)


def _when(t: float | None) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(t)) if t else "-"


class Links:
    def __init__(self, public_url: str) -> None:
        self.base = public_url.rstrip("/")

    def run(self, env: str) -> str:
        return f"{self.base}/env/{quote(env, safe='')}"

    def console(self, env: str, error: bool = False) -> str:
        return f"{self.base}/console/{quote(env, safe='')}" + ("#error" if error else "")


SCAN_POINTS = 200_000  # points of a new pane looked through for a NaN (its later points come as extends)


def _nan_event(env: str, win: str, name: str | None, x: np.ndarray, y: np.ndarray, links: Links) -> dict | None:
    bad = np.flatnonzero(~np.isfinite(y))
    if not len(bad):
        return None
    series = win if name in (None, "", "1") else f"{win}/{name}"
    value = y[bad[0]]
    what = "NaN" if np.isnan(value) else ("inf" if value > 0 else "-inf")
    step = x[bad[0]]
    return payload.event("nan", env, f"Run {env}: {what} in {series} at step {step:g}",
                         {"series": series, "value": what, "step": f"{step:g}"}, links.run(env), f"nan:{env}:{series}")


def _new_pane_nans(env: str, win: str, store: Store, links: Links) -> list[dict[str, Any]]:
    pane = store.get_pane(env, win)
    if pane is None or pane.kind != "line":
        return []
    out, budget = [], SCAN_POINTS
    for trace in store.list_traces(pane):
        for x, y, _wall in store.export_series(trace):
            budget -= len(y)
            ev = _nan_event(env, win, trace.name, np.asarray(x, np.float64), np.asarray(y, np.float64), links)
            if ev is not None:
                out.append(ev)
                break
            if budget <= 0:
                return out
    return out


def dropped_row(store: Store, env: str, n: int, cap: int) -> Command:
    """The alerts-pane row that counts `n` notifications of `env` dropped because the outbox was full."""
    fresh = store.get_pane(env, ALERTS_WIN) is None
    head = "<b>alerts</b> (time · step · rule: message)<br>" if fresh else ""
    row = (f"{time.strftime('%Y-%m-%d %H:%M:%S')} · server · <b>{DROPPED}</b>: {n} (the outbox holds at most "
           f"{cap} undelivered: receivers down?)")
    return parse_event({"op": "update", "kind": "text", "mode": "append", "env": env, "win": ALERTS_WIN,
                        "opts": {"title": "alerts"}, "content": head + row})


def events_of(m: dict[str, Any], store: Store, links: Links, panes_seen: set[tuple[str, str]],
              last_status: dict[str, str], alert_rows: dict[str, int] | None = None) -> list[dict[str, Any]]:
    """The events one interesting message stands for (the notifier's thread: it may read the store)."""
    env = str(m.get("env"))
    if m["type"] == "run":
        run = m["run"]
        status = run["status"]
        if status == "running":
            last_status[env] = status
            return []
        key = f"run:{env}:{status}:{run.get('started')}:{run.get('ended')}"
        if status == "stalled":  # a run may stall, resume and stall again: each stall is an event of its own
            if last_status.get(env) == "stalled":
                return []
            key += f":{time.time_ns()}"
        last_status[env] = status
        fields = {"status": status, "started": _when(run.get("started"))}
        if run.get("started") and run.get("ended"):
            fields["duration"] = f"{run['ended'] - run['started']:.0f} s"
        host = (run.get("provenance") or {}).get("host")
        if host:
            fields["host"] = str(host)
        error = (run.get("error") or "").strip().splitlines()
        if error:
            fields["error"] = error[-1][:500]
        bad = status in ("crashed", "failed")
        if bad:
            fields["console"] = links.console(env, error=True)
        return [payload.event(status, env, f"Run {env} {status}", fields, links.run(env), key)]
    if m["type"] == "extend":
        out = []
        for t in m["traces"]:
            ev = _nan_event(env, m["win"], t.get("name"), np.asarray(t["x"], np.float64),
                            np.asarray(t["y"], np.float64), links)
            if ev is not None:
                out.append(ev)
        return out
    if m.get("win") != ALERTS_WIN:
        if (env, m.get("win")) in panes_seen:
            return []
        panes_seen.add((env, str(m.get("win"))))
        return _new_pane_nans(env, str(m.get("win")), store, links)
    pane = store.get_pane(env, ALERTS_WIN)
    if pane is None:
        return []
    rows = str((pane.content or {}).get("html", "")).split("<br>")
    alert_rows = {} if alert_rows is None else alert_rows
    # Only rows not told yet: their outbox rows (the key's dedup) are deleted a while after delivery.
    seen = alert_rows.get(env)
    if seen is None:
        seen = int(store.get_setting(ALERT_ROWS_SETTING + env) or 0)
    if len(rows) < seen:  # the pane was deleted and made again
        seen = 0
    out = []
    for i, row in enumerate(rows):
        text = html.unescape(_TAG.sub("", row)).strip()
        if i < seen or not text or text.startswith("alerts (time") or f"· server · {DROPPED}" in text:
            continue
        digest = hashlib.sha1(text.encode()).hexdigest()[:12]
        out.append(payload.event("alert", env, f"Run {env} alert: {text}"[:500], {"alert": text[:1000]},
                                 links.run(env), f"alert:{env}:{i}:{digest}"))
    if len(rows) != alert_rows.get(env):
        alert_rows[env] = len(rows)
        store.put_setting(ALERT_ROWS_SETTING + env, len(rows))
    return out
