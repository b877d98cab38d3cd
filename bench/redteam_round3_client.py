"""Red-team areas of issue 40's third pass on the client side: terminal escapes from `paneboard runs|status|tail`,
`use_artifact` against a hostile server, and the notifier against redirecting, hung and absent receivers."""

from __future__ import annotations

import contextlib
import io
import json
import logging
import re
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from common import free_port, stop  # noqa: E402
from redteam_common import ADMIN, Srv, check, up  # noqa: E402

from helpers.hostile_http import HostileServer  # noqa: E402
from helpers.webhooks import Hook  # noqa: E402

OSC52 = "\x1b]52;c;cm0gLXJmIH4K\x07"
OBEYED = re.compile(r"\x1b\[[0-9;:]*m|([\x00-\x08\x0a-\x1f\x7f-\x9f])")


def _obeyed(text: str) -> int:
    return sum(1 for ln in text.splitlines() for m in OBEYED.finditer(ln) if m.group(1))


def terminal(srv: Srv) -> None:
    """A job's title, clear-screen and clipboard escapes in console, config, provenance and error."""
    from paneboard.cli import main

    env = "rt_term"
    srv.call("POST", "/api/v1/events", {"events": [
        {"op": "run_start", "env": env, "client": "rt", "provenance": {"host": "h\x1b]0;pwned\x07", "argv": [OSC52]}},
        {"op": "run_config", "env": env, "config": {"opt": "adam" + OSC52}},
        {"op": "console", "env": env, "lines": [[1, 1.0, "stdout", "\x1b[31mred\x1b[0m \x1b[2J" + OSC52 + "\x9b2J"]]},
        {"op": "run_end", "env": env, "client": "rt", "status": "failed", "error": "boom" + OSC52}]})
    for argv in (["status", env], ["runs", 'name = "rt_term"'], ["tail", env, "--no-follow"], ["tail", env]):
        out = io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
            main([*argv, "--server", srv.url, "--token", ADMIN])
        text = out.getvalue()
        check("terminal", f"`paneboard {' '.join(argv[:1] + argv[2:])}` obeys no control character",
              lambda t=text: (_obeyed(t) == 0 and "\\x1b]52;" in t, f"{_obeyed(t)} obeyed"))


def artifacts() -> None:
    """use_artifact against a hostile server naming ../../x, /abs/x and NUL paths."""
    import hashlib

    import paneboard
    from paneboard.artifacts import ArtifactError

    logging.getLogger("paneboard").setLevel(logging.ERROR)  # its clients cannot stream to the hostile server: known
    data = b"owned\n"
    sha = hashlib.sha256(data).hexdigest()
    for label in ("../../../../../x", "/abs/x", "a NUL"):
        tmp = Path(tempfile.mkdtemp(prefix="pb-rt-art-"))  # the cache is tmp/a/b/cache: x lands in tmp/a
        path = {"/abs/x": str(tmp / "abs-x"), "a NUL": "a\x00b"}.get(label, label)
        manifest = {"name": "m", "version": 1, "files": [{"path": path, "sha256": sha, "size": len(data)}]}
        evil = HostileServer({"/api/v1/artifact": (200, json.dumps(manifest).encode(), "application/json"),
                              f"/api/v1/artifact-blobs/{sha}": (200, data, "application/octet-stream")})
        c = paneboard.Client(server="http://127.0.0.1", port=evil.port, env="victim", spool_dir=False)

        def refused(tmp: Path = tmp, c: Any = c) -> tuple[bool, str]:
            try:
                c.use_artifact("m:v1", root=tmp / "a" / "b" / "cache")
                raised = "nothing"
            except ArtifactError:
                raised = "ArtifactError"
            except Exception as exc:  # noqa: BLE001 (what it raised is the finding)
                raised = type(exc).__name__
            outside = [p for p in tmp.rglob("*") if p.is_file() and "cache" not in p.parts]
            return raised == "ArtifactError" and not outside, f"{raised}, {len(outside)} file(s) outside"
        check("artifacts", f"use_artifact naming {label} writes nothing outside its cache", refused)
        c.close_connection(0)
        evil.close()


def _notify_server(tmp: Path, targets: list[str], **env: str) -> tuple[Srv, subprocess.Popen]:
    import os

    port = free_port()
    args = [sys.executable, "-m", "paneboard.server", "--host", "127.0.0.1", "--port", str(port), "--db",
            str(tmp / "notify.db"), "--log-level", "error", "--token", ADMIN]
    for t in targets:
        args += ["--notify", t]
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env={**os.environ, **env})
    return up(Srv(f"http://127.0.0.1:{port}", proc.pid), proc), proc


def _finish(srv: Srv, envs: list[str]) -> None:
    srv.call("POST", "/api/v1/events", {"events": [ev for e in envs for ev in (
        {"op": "run_start", "env": e, "client": e}, {"op": "run_end", "env": e, "client": e})]})


def notifier(cap: int = 50, flood_s: float = 5.0) -> None:
    """A redirecting receiver, a hung one beside a healthy one, and a rule with cool-down 0 while the receiver
    is down (outbox rows counted in the database)."""
    tmp = Path(tempfile.mkdtemp(prefix="pb-rt-notify-"))
    internal, hung, healthy = Hook(), Hook("hang"), Hook()
    redirector = Hook(internal.url.replace("/hook", "/latest/meta-data"))
    srv, proc = _notify_server(tmp, [redirector.url, hung.url, healthy.url])
    try:
        t0 = time.monotonic()
        _finish(srv, ["n1", "n2", "n3"])
        got = healthy.wait_for(3, timeout=30)
        took = time.monotonic() - t0
        check("notify", "a hung receiver delays no other (< 1 s)", lambda: (len(got) == 3 and took < 1.0,
                                                                            f"3 posts in {took:.2f} s"))
        redirector.wait_for(1, timeout=10)
        check("notify", "a receiver's redirect is not followed", lambda: (
            internal.requests == [] and bool(redirector.requests), f"{len(internal.requests)} request(s) followed"))
    finally:
        hung.released.set()
        stop(proc)
        for hook in (internal, hung, healthy, redirector):
            hook.close()
    flood = Path(tempfile.mkdtemp(prefix="pb-rt-flood-"))
    srv, proc = _notify_server(flood, [f"http://127.0.0.1:{free_port()}/down"],
                               PANEBOARD_NOTIFY_MAX_PENDING=str(cap), PANEBOARD_NOTIFY_PRUNE_EVERY_S="1")
    try:
        srv.call("POST", "/api/v1/events", {"events": [ev for i in range(40) for ev in (
            {"op": "run_start", "env": f"f{i}", "client": f"f{i}"},
            {"op": "update", "env": f"f{i}", "win": "loss", "kind": "line", "mode": "append",
             "traces": [{"name": None, "x": [0.0], "y": [9.0]}]})]})
        srv.call("POST", "/api/v1/alert-rules", {"query": "loss.last > 5", "cooldown_s": 0})
        t0 = time.monotonic()
        peak, dropped = 0, False
        # Until the server has dropped rows and said so, and at least flood_s: the rows the rule adds meanwhile
        # (40 a second) stay within the cap plus what a prune interval (1 s here) adds.
        while time.monotonic() - t0 < max(flood_s, 0.0 if dropped else 30.0):
            with contextlib.closing(sqlite3.connect(f"file:{flood / 'notify.db'}?mode=ro", uri=True)) as db:
                peak = max(peak, db.execute("SELECT count(*) FROM notify_outbox").fetchone()[0])
            dropped = dropped or "notifications dropped" in json.dumps(
                srv.call("GET", "/api/v1/envs/f0/panes/alerts")[2])
            time.sleep(0.25)
        took = time.monotonic() - t0
        check("notify", f"the outbox stays bounded (cap {cap}) under a cool-down 0 rule", lambda: (
            dropped and peak <= cap + 40 * 3, f"peak {peak} rows in {took:.0f} s, drops counted: {dropped}"))
    finally:
        stop(proc)
