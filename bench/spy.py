"""py-spy sampling around one bench step: the hottest frames (self and inclusive) of the processes it names."""

from __future__ import annotations

import collections
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

RATE = 250  # samples/s: enough samples over a few seconds without slowing the target much


def _short(frame: str) -> str:
    # "func (path/to/file.py:123)" -> "func (file.py:123)" keeping the package folder for our modules.
    if "(" not in frame:
        return frame
    func, _, loc = frame.rpartition(" (")
    parts = loc.rstrip(")").split("/")
    return f"{func} ({'/'.join(parts[-2:])})"


def top_frames(raw: str, n: int = 8) -> dict[str, Any]:
    """Self and inclusive shares (% of samples) from py-spy's raw (collapsed) output."""
    self_c: collections.Counter[str] = collections.Counter()
    incl_c: collections.Counter[str] = collections.Counter()
    total = 0
    for line in raw.splitlines():
        stack, _, count = line.rpartition(" ")
        if not stack or not count.isdigit():
            continue
        c = int(count)
        total += c
        frames = [_short(f) for f in stack.split(";")]
        self_c[frames[-1]] += c
        for f in set(frames):
            incl_c[f] += c
    if not total:
        return {"samples": 0, "self": [], "inclusive": []}
    pct = lambda counter: [[f, round(100 * c / total, 1)] for f, c in counter.most_common(n)]  # noqa: E731
    # Inclusive shares of the outermost frames are ~100% and say nothing: keep frames of our own code.
    ours = collections.Counter({f: c for f, c in incl_c.items()
                                if any(k in f for k in ("server/", "client_sdk/", "paneboard/", "store/",
                                                        "web/", "panes/"))
                                and not any(k in f for k in ("<module>", "server/cli.py", "AsgiApp.__call__"))})
    return {"samples": total, "self": pct(self_c), "inclusive": pct(ours)}


def profiled(pids: dict[str, int], step: Callable[[], Any]) -> dict[str, Any]:
    """Sample each named pid with py-spy while step() runs; {name: top_frames} (or an n/a reason)."""
    exe = shutil.which("py-spy")
    if exe is None:
        return {"na": "py-spy is not installed"}
    tmp = Path(tempfile.mkdtemp(prefix="pb-spy-"))
    spies = {}
    for name, pid in pids.items():
        out = tmp / f"{name}.txt"
        spies[name] = (out, subprocess.Popen([exe, "record", "-p", str(pid), "-r", str(RATE), "-f", "raw",
                                              "-o", str(out), "--nonblocking"],
                                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE))
    time.sleep(1.0)  # py-spy attaches before the step starts
    try:
        step()
    finally:
        result: dict[str, Any] = {}
        for name, (out, proc) in spies.items():
            proc.send_signal(signal.SIGINT)  # py-spy writes its file on SIGINT
            try:
                _, err = proc.communicate(timeout=60)
            except subprocess.TimeoutExpired:
                proc.kill()
                _, err = proc.communicate()
            if out.exists():
                result[name] = top_frames(out.read_text())
            else:
                result[name] = {"na": (err or b"").decode(errors="replace")[-300:] or "no py-spy output"}
        shutil.rmtree(tmp, ignore_errors=True)
    return result
