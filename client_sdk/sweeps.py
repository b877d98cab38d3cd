"""Sweeps from the SDK: `paneboard.sweep(config)` makes one on the server, `paneboard.agent(id)` runs its trials."""

from __future__ import annotations

import json
import logging
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .terminal import DEFAULT_URL

log = logging.getLogger("paneboard.sweeps")

DEFAULT_COMMAND = ("${env}", "${interpreter}", "${program}", "${args}")
STOP_GRACE_S = 10.0  # a stopped program gets this long after SIGTERM before SIGKILL


class SweepApiError(RuntimeError):
    """The server refused a sweep call (its message), or could not be reached."""


class SweepApi:
    """The sweep calls of a dash-server's JSON API (PANEBOARD_URL, PANEBOARD_TOKEN by default)."""

    def __init__(self, server: str | None = None, token: str | None = None) -> None:
        base = server or os.environ.get("PANEBOARD_URL") or DEFAULT_URL
        self.base = (base if "://" in base else "http://" + base).rstrip("/")
        self.token = token if token is not None else os.environ.get("PANEBOARD_TOKEN")
        host = urllib.parse.urlsplit(self.base).hostname or ""
        loopback = host in ("localhost", "::1") or host.startswith("127.")
        self._opener = urllib.request.build_opener(*([urllib.request.ProxyHandler({})] if loopback else []))

    def call(self, method: str, path: str, body: Any = None) -> Any:
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.base + path, data=data, method=method,
                                     headers={"Content-Type": "application/json"})
        if self.token:
            req.add_header("Authorization", f"Bearer {self.token}")
        try:
            with self._opener.open(req, timeout=60) as r:
                return json.loads(r.read())
        except urllib.error.HTTPError as exc:
            try:
                message = json.loads(exc.read()).get("error")
            except (ValueError, AttributeError):
                message = None
            raise SweepApiError(message or f"HTTP {exc.code} from {path}") from None
        except OSError as exc:
            raise SweepApiError(f"cannot reach {self.base}: {exc}") from None


def sweep(sweep: Any, project: str | None = None, *, server: str | None = None, token: str | None = None) -> str:
    """W&B's wandb.sweep: create a sweep from its configuration (a dict, a YAML file's path or text); its id."""
    if isinstance(sweep, Path) or (isinstance(sweep, str) and "\n" not in sweep and Path(sweep).is_file()):
        sweep = Path(sweep).read_text()
    body: dict[str, Any] = {"config": sweep}
    if project:
        body["project"] = project
    return str(SweepApi(server, token).call("POST", "/api/v1/sweeps", body)["id"])


def set_state(sweep_id: str, action: str, *, server: str | None = None, token: str | None = None) -> dict:
    """pause, resume, stop (running trials finish) or cancel (running trials are stopped)."""
    return SweepApi(server, token).call("POST", f"/api/v1/sweeps/{_q(sweep_id)}/state", {"action": action})


def agent(sweep_id: str, function: Callable[[], Any] | None = None, count: int | None = None, *,
          server: str | None = None, token: str | None = None, heartbeat_s: float = 10.0, **ignored: Any) -> int:
    """W&B's wandb.agent: run the sweep's trials (at most `count`) until it has none left; the number run.

    Without `function` each trial runs the sweep's program as a process (W&B's command and arguments); with
    it, `function()` is called in this process, where paneboard.init() picks up the trial's config."""
    return Agent(sweep_id, SweepApi(server, token), function, heartbeat_s).run(count)


def _q(s: str) -> str:
    return urllib.parse.quote(s, safe="")


class Agent:
    """Claims trials one at a time and runs each, heartbeating its metric reports until it ends or is stopped."""

    def __init__(self, sweep_id: str, api: SweepApi, function: Callable[[], Any] | None = None,
                 heartbeat_s: float = 10.0) -> None:
        self.sweep_id, self.api, self.function, self.heartbeat_s = sweep_id, api, function, heartbeat_s
        self.id = f"{socket.gethostname()}-{os.getpid()}-{secrets.token_hex(2)}"
        self._stop = threading.Event()

    def _post(self, path: str, body: dict[str, Any]) -> Any:
        return self.api.call("POST", f"/api/v1/sweeps/{_q(self.sweep_id)}{path}",
                             {"agent": self.id, "heartbeat_s": self.heartbeat_s, **body})

    def run(self, count: int | None = None) -> int:
        if self.function is None:
            config = self.api.call("GET", f"/api/v1/sweeps/{_q(self.sweep_id)}")["config"]
            if not config.get("program") and "${program}" in (config.get("command") or DEFAULT_COMMAND):
                raise SweepApiError(f"sweep {self.sweep_id} names no program: run its trials in Python with "
                                    "paneboard.agent(sweep_id, function=train)")
        done = 0
        while count is None or done < count:
            answer = self._post("/next", {})
            trial = answer.get("trial")
            if trial is None:
                if "retry_s" in answer and not self._stop.wait(float(answer["retry_s"])):
                    continue  # paused, or a running trial may yet be queued again: ask again
                log.info("sweep %s has no trial left (%s)", self.sweep_id, answer.get("state"))
                break
            log.info("sweep %s: trial %s with %s", self.sweep_id, trial["number"], trial["config"])
            self._run_function(trial) if self.function is not None else self._run_program(trial)
            done += 1
        return done

    # -- a trial as a process --------------------------------------------------------------------------
    def _run_program(self, trial: dict[str, Any]) -> None:
        with tempfile.TemporaryDirectory(prefix="paneboard-trial-") as tmp:
            argv = command_line(trial, Path(tmp) / "config.json")
            proc = subprocess.Popen(argv, env={**os.environ, **self._trial_env(trial)},
                                    preexec_fn=_die_with_parent if sys.platform.startswith("linux") else None)
            code: int | None = None
            while True:
                try:
                    code = proc.wait(timeout=self.heartbeat_s)
                    break
                except subprocess.TimeoutExpired:
                    pass
                answer = self._heartbeat(trial)
                if answer is not None and answer.get("action") == "stop":
                    log.warning("sweep %s: trial %s stopped: %s", self.sweep_id, trial["number"], answer.get("reason"))
                    _terminate(proc)
                    code = None
                    break
            self._finish(trial, code)

    def _heartbeat(self, trial: dict[str, Any]) -> dict[str, Any] | None:
        try:
            return self._post(f"/trials/{trial['number']}/heartbeat", {})
        except SweepApiError as exc:  # the server away for a moment: the trial goes on, the next beat retries
            log.warning("sweep %s: heartbeat of trial %s failed: %s", self.sweep_id, trial["number"], exc)
            return None

    def _finish(self, trial: dict[str, Any], code: int | None) -> None:
        try:
            self._post(f"/trials/{trial['number']}/finish", {"exit_code": code})
        except SweepApiError as exc:
            log.warning("sweep %s: could not report the end of trial %s: %s", self.sweep_id, trial["number"], exc)

    def _trial_env(self, trial: dict[str, Any]) -> dict[str, str]:
        env = {"PANEBOARD_SWEEP_ID": self.sweep_id, "PANEBOARD_SWEEP_RUN": trial["run"],
               "PANEBOARD_SWEEP_CONFIG": json.dumps(trial["config"]), "PANEBOARD_URL": self.api.base}
        if self.api.token:
            env["PANEBOARD_TOKEN"] = self.api.token
        return env

    # -- a trial as a function in this process -------------------------------------------------------
    def _run_function(self, trial: dict[str, Any]) -> None:
        assert self.function is not None
        saved = {k: os.environ.get(k) for k in self._trial_env(trial)}
        os.environ.update(self._trial_env(trial))
        ended = threading.Event()
        stopped: list[str] = []

        def beat() -> None:
            while not ended.wait(self.heartbeat_s):
                answer = self._heartbeat(trial)
                if answer is not None and answer.get("action") == "stop":
                    stopped.append(str(answer.get("reason")))
                    if in_main:
                        import _thread

                        _thread.interrupt_main()  # the function stops where the pruner said, as a process would
                    return

        in_main = threading.current_thread() is threading.main_thread()
        threading.Thread(target=beat, name="paneboard-sweep-heartbeat", daemon=True).start()
        code: int | None = 0
        try:
            self.function()
        except KeyboardInterrupt:
            if not stopped:
                raise
            code = None
        except Exception:
            log.exception("sweep %s: trial %s failed", self.sweep_id, trial["number"])
            code = 1
        finally:
            ended.set()
            from .run_api import module

            if module.current is not None:
                module.current.finish(None if code == 0 else 1)
            for k, v in saved.items():
                os.environ.pop(k, None) if v is None else os.environ.__setitem__(k, v)
        self._finish(trial, code)


def command_line(trial: dict[str, Any], json_file: Path) -> list[str]:
    """The trial's command as W&B builds it from the sweep's `command` and its macros."""
    config: dict[str, Any] = trial["config"]
    args = [f"--{k}={_arg(v)}" for k, v in config.items()]
    out: list[str] = []
    for part in trial.get("command") or DEFAULT_COMMAND:
        if part == "${env}":
            if os.name == "posix" and shutil.which("env"):
                out.append("/usr/bin/env" if os.path.exists("/usr/bin/env") else str(shutil.which("env")))
        elif part == "${interpreter}":
            out.append(sys.executable)
        elif part == "${program}":
            out.append(str(trial["program"]))
        elif part == "${args}":
            out += args
        elif part == "${args_no_hyphens}":
            out += [a[2:] for a in args]
        elif part == "${args_json}":
            out.append(json.dumps(config))
        elif part == "${args_json_file}":
            json_file.write_text(json.dumps(config))
            out.append(str(json_file))
        elif part == "${project}":
            out.append(str(trial.get("project") or ""))
        else:
            out.append(part)
    return out


def _arg(v: Any) -> str:
    return v if isinstance(v, str) else str(v) if isinstance(v, (bool, int, float)) else json.dumps(v)


def _die_with_parent() -> None:
    """In the child: the kernel kills the program if the agent dies, so its trial is not run twice at once."""
    import ctypes

    try:
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except OSError:
        pass


def _terminate(proc: subprocess.Popen) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=STOP_GRACE_S)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
