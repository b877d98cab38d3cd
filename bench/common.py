"""Helpers shared by the bench scripts: free ports, starting/stopping the three servers, RSS, HTTP timing."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

# Loopback only: an HTTP(S)_PROXY in the environment must never see bench traffic.
os.environ.setdefault("NO_PROXY", "127.0.0.1,localhost")
_OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def paced(n: int, rate: float, call: Callable[[int], Any]) -> tuple[list[float], float]:
    """call(i) for i < n at `rate` per second; returns each call's start time (perf_counter) and seconds taken.

    Sleeps, never spins: a spinning caller would starve the SDK's and the reader's threads of the GIL.
    """
    sent = [0.0] * n
    t0 = time.perf_counter()
    for i in range(n):
        delay = t0 + i / rate - time.perf_counter()
        if delay > 0:
            time.sleep(delay)
        sent[i] = time.perf_counter()
        call(i)
    return sent, time.perf_counter() - t0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_up(proc: subprocess.Popen, url: str, what: str, data: bytes | None = None, timeout: float = 60) -> None:
    """Poll url (GET, or POST with data) until it answers; raise if the process exits or time runs out, after
    stopping it (and the children of a process that leads its own group): nobody else would."""
    try:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                raise RuntimeError(f"{what} exited with {proc.returncode}")
            try:
                _OPENER.open(url, data=data, timeout=1).close()
                return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError(f"{what} did not start in {timeout:.0f} s")
    except BaseException:
        try:
            group = os.getpgid(proc.pid) == proc.pid
        except ProcessLookupError:
            group = False
        stop(proc, group=group)
        raise


def start_server(db: Path, port: int) -> subprocess.Popen:
    """dash-server on loopback with its own SQLite file."""
    proc = subprocess.Popen([sys.executable, "-m", "paneboard.server", "--host", "127.0.0.1", "--port", str(port),
                             "--db", str(db), "--log-level", "warning"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_up(proc, f"http://127.0.0.1:{port}/api/v1/envs", "dash-server")
    return proc


def start_visdom(env_path: Path, port: int) -> subprocess.Popen:
    """Visdom's server as `python -m visdom.server -port P -env_path DIR -bind_local`, minus its CDN downloads.

    `python -m visdom.server` first fetches ~20 JS/CSS files from public CDNs on every start; the bench must
    stay on loopback, so run_server.main() (what it calls after downloading) is started directly.
    """
    code = 'import sys; sys.argv[0] = "visdom"; from visdom.server.run_server import main; main()'
    proc = subprocess.Popen([sys.executable, "-c", code, "-port", str(port), "-env_path", str(env_path),
                             "-bind_local", "-logging_level", "WARNING"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_up(proc, f"http://127.0.0.1:{port}/env_state", "visdom server", data=b"{}")
    return proc


def tensorboard_cmd() -> str | None:
    exe = shutil.which("tensorboard")
    return exe if exe and has_module("tensorboard") else None


def has_module(name: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(name) is not None


def data_server_binary() -> str | None:
    """RustBoard's binary (load_fast=true), shipped by the tensorboard-data-server wheel."""
    try:
        from tensorboard_data_server import server_binary

        path = server_binary()
    except Exception:  # not installed, or no binary for this platform
        return None
    return path if path and os.path.exists(path) else None


def start_tensorboard(logdir: Path, port: int, load_fast: bool) -> subprocess.Popen:
    exe = tensorboard_cmd()
    if exe is None:
        raise RuntimeError("tensorboard is not installed")
    # Its own session: load_fast=true starts a child data server that must be stopped with it.
    proc = subprocess.Popen([exe, "--logdir", str(logdir), "--port", str(port), "--host", "127.0.0.1",
                             f"--load_fast={'true' if load_fast else 'false'}"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    wait_up(proc, f"http://127.0.0.1:{port}/data/runs", "tensorboard", timeout=120)
    return proc


def stop(proc: subprocess.Popen, group: bool = False) -> None:
    """Terminate a server this bench started (its process group when it has children of its own)."""
    if proc.poll() is None:
        if group:
            os.killpg(proc.pid, signal.SIGTERM)
        else:
            proc.terminate()
    try:
        proc.wait(30)
    except subprocess.TimeoutExpired:
        if group:
            os.killpg(proc.pid, signal.SIGKILL)
        else:
            proc.kill()
        proc.wait(10)


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def rss_parts_mb(pid: int) -> dict[str, float]:
    """RssAnon (heap, Python objects) and RssFile (mapped files: libraries, SQLite pages) of a process."""
    out = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key = line.split(":")[0]
        if key in ("RssAnon", "RssFile"):
            out[key] = int(line.split()[1]) / 1024
    return out


def tree_rss_mb(pid: int) -> float:
    """RSS of a process and its direct children (TensorBoard's data server is a child)."""
    total = rss_mb(pid)
    kids = Path(f"/proc/{pid}/task/{pid}/children")
    for child in kids.read_text().split() if kids.exists() else ():
        try:
            total += rss_mb(int(child))
        except OSError:
            pass
    return total


def timed_get(url: str, data: bytes | None = None, timeout: float = 120) -> tuple[float, bytes]:
    """(seconds to the last byte, body) of one GET (or POST with data) over a fresh connection."""
    t0 = time.perf_counter()
    with _OPENER.open(url, data=data, timeout=timeout) as r:
        body = r.read()
    return time.perf_counter() - t0, body


def loadavg() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def median_of(runs: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """Per-key median of numeric fields across runs; other fields from the last run; lists of dicts by position."""
    runs = list(runs)
    if not runs:
        return {}
    out: dict[str, Any] = {}
    for key, last in runs[-1].items():
        vals = [r.get(key) for r in runs]
        if isinstance(last, bool) or last is None:
            out[key] = all(vals) if isinstance(last, bool) else last
        elif isinstance(last, (int, float)):
            nums = [v for v in vals if isinstance(v, (int, float)) and v == v]
            out[key] = statistics.median(nums) if nums else None
        elif isinstance(last, dict):
            out[key] = median_of(v for v in vals if isinstance(v, dict))
        elif isinstance(last, list) and last and all(isinstance(v, dict) for v in last):
            out[key] = [median_of(v[i] for v in vals if isinstance(v, list) and i < len(v))
                        for i in range(len(last))]
        else:
            out[key] = last
    return out


def temp_dir(prefix: str) -> Path:
    return Path(tempfile.mkdtemp(prefix=f"pb-bench-{prefix}-"))


def guarded(fn: Callable[..., dict[str, Any]], *args: Any, **kw: Any) -> dict[str, Any]:
    """Run one peer measurement; a failure becomes an explicit n/a with its reason instead of ending the run."""
    try:
        return fn(*args, **kw)
    except Exception as e:  # the reason is reported in the table
        return {"na": f"{type(e).__name__}: {e}"[:300]}


def cpu_seconds(pid: int) -> float:
    """utime + stime of every thread of a process so far (/proc/<pid>/stat fields 14 and 15)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
