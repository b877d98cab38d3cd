"""`paneboard runs | tail | status`: a server's runs, a run's console and its state, as plain text to paste."""

from __future__ import annotations

import json
import os
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from collections import Counter
from collections.abc import Callable
from datetime import datetime, timezone
from typing import Any, TextIO

from .term_escape import safe

ACTIVE = ("running", "stalled")
DEFAULT_URL = "http://localhost:8097"


class CliError(Exception):
    """What the command prints on stderr before exiting with status 1."""


class Api:
    """GETs on a dash-server's read API (PANEBOARD_URL, a bearer token), through no proxy for loopback."""

    def __init__(self, server: str | None, token: str | None) -> None:
        base = server or os.environ.get("PANEBOARD_URL") or DEFAULT_URL
        self.base = (base if "://" in base else "http://" + base).rstrip("/")
        self.token = token if token is not None else os.environ.get("PANEBOARD_TOKEN")
        host = urllib.parse.urlsplit(self.base).hostname or ""
        loopback = host in ("localhost", "::1") or host.startswith("127.")
        self.opener = urllib.request.build_opener(*([urllib.request.ProxyHandler({})] if loopback else []))

    def get(self, path: str, **params: Any) -> tuple[bytes, Any]:
        query = urllib.parse.urlencode({k: v for k, v in params.items() if v is not None})
        req = urllib.request.Request(self.base + path + (f"?{query}" if query else ""))
        if self.token:
            req.add_header("Authorization", f"Bearer {self.token}")
        try:
            with self.opener.open(req, timeout=30) as r:
                return r.read(), r.headers
        except urllib.error.HTTPError as exc:
            try:
                message = json.loads(exc.read()).get("error")
            except (ValueError, AttributeError):
                message = None
            raise CliError(message or f"HTTP {exc.code}") from None
        except OSError as exc:
            raise CliError(f"cannot reach {self.base}: {exc}") from None

    def json(self, path: str, **params: Any) -> Any:
        return json.loads(self.get(path, **params)[0])

    def env_path(self, env: str) -> str:
        return "/api/v1/envs/" + urllib.parse.quote(env, safe="")


def fmt_age(seconds: float) -> str:
    seconds = max(0.0, seconds)
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{int(seconds // size)}{unit}"
    return f"{int(seconds)}s"


def fmt_duration(seconds: float) -> str:
    """Two units, as people say it: "3h 12m", "5m 03s", "42s"."""
    s = int(max(0.0, seconds))
    d, h, m = s // 86400, s // 3600 % 24, s // 60 % 60
    if d:
        return f"{d}d {h}h"
    if h:
        return f"{h}h {m:02d}m"
    return f"{m}m {s % 60:02d}s" if m else f"{s}s"


def fmt_value(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:.4g}"
    if v is None:
        return "-"
    return v if isinstance(v, str) else json.dumps(v)


def table(rows: list[list[str]]) -> str:
    rows = [[safe(c) for c in r] for r in rows]  # run names, config values: whatever a job sent
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows)


def runs_text(runs: list[dict], now: float, max_config: int = 4, max_series: int = 4) -> str:
    """One row per run: status, age, name, the config keys that differ between runs, the commonest series."""
    if not runs:
        return "no runs"
    keys = Counter(k for r in runs for k in r.get("config") or {})
    varying = [k for k, _ in keys.most_common() if len({json.dumps((r.get("config") or {}).get(k), sort_keys=True)
                                                          for r in runs}) > 1 or len(runs) == 1][:max_config]
    series = [s for s, _ in Counter(s for r in runs for s in r.get("summaries") or {}).most_common(max_series)]
    rows = [["STATUS", "AGE", "RUN", *varying, *series]]
    for r in runs:
        when = r.get("started") or r.get("created") or now
        sums = r.get("summaries") or {}
        rows.append([r.get("status") or "-", fmt_age(now - when), r["env"],
                     *[fmt_value((r.get("config") or {}).get(k)) for k in varying],
                     *[fmt_value((sums.get(s) or {}).get("last")) for s in series]])
    return table(rows)


def runs(api: Api, query: str | None, limit: int, out: TextIO) -> int:
    got = api.json("/api/v1/runs", q=query or None, limit=limit)
    print(runs_text(got["runs"], time.time()), file=out)
    if got["total"] > len(got["runs"]):
        print(f"({len(got['runs'])} of {got['total']} runs; --limit for more)", file=out)
    return 0


def _when(t: float | None) -> str:
    return datetime.fromtimestamp(t, timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC") if t else "-"


def status_text(api: Api, env: str, run: dict, listed: dict | None, now: float) -> str:
    status = run.get("status") or "no job reported"
    started, ended = run.get("started"), run.get("ended")
    took = f" after {fmt_duration((ended or now) - started)}" if started else ""
    lines = [f"{env}: {status}{took}", f"started {_when(started)}" + (f", ended {_when(ended)}" if ended else "")]
    p = run.get("provenance") or {}
    if p:
        who = f"{p['user']}@" if p.get("user") else ""
        versions = " · ".join(x for x in (f"python {p['python']}" if p.get("python") else "",
                                          f"torch {p['torch']}" if p.get("torch") else "",
                                          f"CUDA {p['cuda']}" if p.get("cuda") else "") if x)
        lines.append(f"host {who}{p.get('host', '?')} · pid {p.get('pid', '?')}" + (f" · {versions}" if versions else ""))
        if p.get("gpus"):
            lines.append("GPUs " + ", ".join(map(str, p["gpus"])))
        git = p.get("git") or {}
        if git.get("commit"):
            lines.append(f"git {git['commit'][:12]} on {git.get('branch') or '?'}" + (" (dirty)" if git.get("dirty") else ""))
        if p.get("argv"):
            lines.append("command " + " ".join(map(str, p["argv"])))
    if run.get("tags"):
        lines.append("tags " + ", ".join(run["tags"]))
    if run.get("config"):
        lines.append("config " + " ".join(f"{k}={fmt_value(v)}" for k, v in run["config"].items()))
    sums = (listed or {}).get("summaries") or {}
    if sums:
        lines.append("latest " + " · ".join(
            f"{name}={fmt_value(s.get('last'))}" + (f" (step {fmt_value(s.get('last_step'))})" if s.get("last_step") is not None else "")
            for name, s in sums.items()))
    if run.get("error"):
        last = [ln for ln in run["error"].strip().splitlines() if ln.strip()]
        lines.append("error " + (last[-1] if last else "?"))
    lines.append(f"console {api.base}/console/{urllib.parse.quote(env, safe='')}")
    return "\n".join(safe(ln) for ln in lines)  # provenance, config, the error: each a job's own text


def status(api: Api, env: str, out: TextIO) -> int:
    run = api.json(api.env_path(env) + "/run")
    quoted = env.replace("\\", "\\\\").replace('"', '\\"')
    listed = next((r for r in api.json("/api/v1/runs", q=f'name = "{quoted}"')["runs"] if r["env"] == env), None)
    print(status_text(api, env, run, listed, time.time()), file=out)
    return 0


def _console(line: dict) -> str:
    return safe(line["text"], keep_sgr=True)  # the job's colours stay; titles, clears and clipboard writes do not


def tail(api: Api, env: str, n: int, follow: bool, rank: int, out: TextIO, poll: float = 0.5,
         sleep: Callable[[float], None] = time.sleep) -> int:
    """The last `n` lines, then (follow) each new one as it ends, until the run is over and nothing is left."""
    path = api.env_path(env) + "/console"
    first = [json.loads(x) for x in api.get(path, rank=rank, tail=n)[0].splitlines() if x.strip()]
    if not follow:
        for line in first:
            print(_console(line), file=out)
        return 0
    after = 0
    for line in first:
        if line.get("open"):
            break  # a bar still being drawn is printed once it ends
        print(_console(line), file=out)
        after = line["n"]
    if not first:
        after = 0
    out.flush()
    while True:
        run_status = api.json(api.env_path(env) + "/run").get("status")
        body, headers = api.get(path, rank=rank, after=after, limit=1000)
        new = [json.loads(x) for x in body.splitlines() if x.strip()]
        waiting = False  # on an open line: later ones wait behind it, in order
        for line in new:
            if line.get("open"):
                waiting = True
                break
            print(_console(line), file=out)
            after = line["n"]
        out.flush()
        if headers.get("X-Console-Next") and not waiting:
            continue
        if run_status not in ACTIVE:
            for line in new:  # the run is over: what is still open will not change any more
                if line["n"] > after:
                    print(_console(line), file=out)
            print(safe(f"[run {run_status or 'has no job'}]"), file=out)
            return 0
        sleep(poll)


def run_command(fn: Callable[[], int]) -> int:
    try:
        return fn()
    except CliError as exc:
        print(f"paneboard: {safe(exc)}", file=sys.stderr)  # the server's error message: its text
        return 1
    except KeyboardInterrupt:
        return 130
