"""What produced a run: host, process, Python/torch/CUDA versions, GPUs, git state and installed packages.

Read once per process (a job that opens several clients pays once), never raising: a missing git, a torch
that is not imported or a slow file system just leaves a field out.
"""

from __future__ import annotations

import getpass
import os
import platform
import socket
import subprocess
import sys
from functools import lru_cache
from importlib import metadata
from pathlib import Path
from typing import Any

from .protocol import MAX_DIFF_BYTES, MAX_PACKAGES

GIT_TIMEOUT = 5.0  # seconds per git command


def capture() -> dict[str, Any]:
    """The provenance of this process, as the run_start op carries it."""
    out: dict[str, Any] = {"host": socket.gethostname(), "pid": os.getpid(), "user": _user(),
                           "argv": [str(a) for a in sys.argv][:200], "cwd": os.getcwd(), **_static()}
    out.update(_torch())
    git = _git(_script_dir())
    if git:
        out["git"] = git
    return out


def _user() -> str | None:
    try:
        return getpass.getuser()
    except Exception:  # no login name in a container without /etc/passwd entry
        return None


@lru_cache(maxsize=1)
def _static() -> dict[str, Any]:
    packages = sorted({f"{name}=={version}" for name, version in map(_name_version, metadata.distributions())
                       if name}, key=str.lower)
    return {"python": platform.python_version(), "platform": platform.platform(), "executable": sys.executable,
            "packages": packages[:MAX_PACKAGES], "packages_total": len(packages)}


def _name_version(dist: metadata.Distribution) -> tuple[str | None, str | None]:
    """A distribution's Name and Version, read off the head of its metadata file. `dist.metadata` parses
    the whole file, long description included, as an email, and every job's first run start pays for it."""
    text = dist.read_text("METADATA") or dist.read_text("PKG-INFO") or ""
    name = version = None
    for line in text.splitlines():
        if not line:  # the headers end here; what follows is the description
            break
        if line.startswith("Name:"):
            name = line[5:].strip()
        elif line.startswith("Version:"):
            version = line[8:].strip()
        if name and version:
            break
    return name, version


def _torch() -> dict[str, Any]:
    """torch's versions and GPUs, only if the job imported torch (importing it here would cost a second)."""
    torch = sys.modules.get("torch")
    if torch is None:
        return {}
    out: dict[str, Any] = {"torch": getattr(torch, "__version__", None)}
    try:
        out["cuda"] = torch.version.cuda
        if torch.cuda.is_available():
            out["gpus"] = [torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())]
    except Exception:
        pass
    return out


def _script_dir() -> Path:
    script = Path(sys.argv[0]) if sys.argv and sys.argv[0] else None
    return script.resolve().parent if script is not None and script.is_file() else Path.cwd()


def _run_git(cwd: Path, *args: str) -> str | None:
    try:
        done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, timeout=GIT_TIMEOUT, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.decode("utf-8", "replace") if done.returncode == 0 else None


@lru_cache(maxsize=8)
def _git(cwd: Path) -> dict[str, Any] | None:
    commit = _run_git(cwd, "rev-parse", "HEAD")
    if commit is None:
        return None
    status = _run_git(cwd, "status", "--porcelain", "--untracked-files=no") or ""
    diff = _run_git(cwd, "diff", "HEAD") or ""
    data = diff.encode()
    truncated = len(data) > MAX_DIFF_BYTES
    if truncated:  # cut on a character boundary; the flag tells the reader it is partial
        diff = data[:MAX_DIFF_BYTES - 64].decode("utf-8", "ignore")
    return {"commit": commit.strip(), "branch": (_run_git(cwd, "rev-parse", "--abbrev-ref", "HEAD") or "").strip(),
            "dirty": bool(status.strip()), "diff": diff, "diff_truncated": truncated,
            "root": (_run_git(cwd, "rev-parse", "--show-toplevel") or "").strip()}
