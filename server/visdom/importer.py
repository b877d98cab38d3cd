"""dash-server import-visdom PATH...: Visdom's saved env files (~/.visdom/*.json) into envs; re-running is idempotent."""

from __future__ import annotations

import math
from pathlib import Path

from .. import jsonio
from ..commands.envelope import EventError
from ..commands.jobs import Submit
from ..dispatch.parse import parse_event
from .translate import window_events


def env_files(paths: list[str]) -> list[Path]:
    """Env files: each path is a .json file or a directory of them (Visdom's env_path; its view/ dir is skipped)."""
    out: list[Path] = []
    for raw in paths:
        p = Path(raw).expanduser()
        if p.is_dir():
            out += sorted(f for f in p.glob("*.json") if f.is_file())
        elif p.is_file():
            out.append(p)
        else:
            raise FileNotFoundError(f"{p}: no such file or directory")
    return out


def _order(window: object) -> float:
    i = window.get("i", 0) if isinstance(window, dict) else 0
    return float(i) if isinstance(i, (int, float)) and not isinstance(i, bool) and math.isfinite(i) else 0.0


def import_file(writer: Submit, path: Path, env: str) -> tuple[int, list[str]]:
    """One env file -> set/update events through the writer (a `set` overwrites, so a re-import replaces, never
    duplicates). Returns (windows imported, problems)."""
    data = jsonio.loads(path.read_bytes())
    jsons = data.get("jsons") if isinstance(data, dict) else None
    if not isinstance(jsons, dict):
        return 0, [f"{path}: not a Visdom env file (no \"jsons\" object)"]
    problems, commands, imported = [], [], 0
    # Visdom orders windows by "i"; keep that order so the panes come out in the same sequence (a file's "i"
    # that is not a number sorts as 0, never a crash of the whole import).
    for win, window in sorted(jsons.items(), key=lambda kv: _order(kv[1])):
        try:
            commands += [parse_event(ev) for ev in window_events(env, str(win), window)]
            imported += 1
        except EventError as exc:
            problems.append(f"{env}/{win}: skipped ({exc})")
    result = writer.submit_wait(commands, timeout=600)
    if result.failed:
        return 0, [f"{env}: could not be stored ({result.failed})"]
    problems += [f"{env}: {e['error']}" for e in result.errors]
    return imported - len(result.errors), problems
