"""dash-server import-visdom PATH...: Visdom's saved env files (~/.visdom/*.json) into envs; re-running is idempotent."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .. import jsonio
from ..events import EventError
from ..panes import parse_event
from ..services import Services
from ..settings import Settings, default_db_path
from .translate import window_events

BAR = 30


def _files(paths: list[str]) -> list[Path]:
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


def _progress(done: int, total: int, label: str) -> None:
    filled = BAR * done // max(total, 1)
    sys.stderr.write(f"\r[{'#' * filled}{'.' * (BAR - filled)}] {done}/{total} {label[:60]:60s}")
    sys.stderr.flush()


def import_file(services: Services, path: Path, env: str) -> tuple[int, list[str]]:
    """One env file -> set/update events through the writer (a `set` overwrites, so a re-import replaces, never
    duplicates). Returns (windows imported, problems)."""
    data = jsonio.loads(path.read_bytes())
    jsons = data.get("jsons") if isinstance(data, dict) else None
    if not isinstance(jsons, dict):
        return 0, [f"{path}: not a Visdom env file (no \"jsons\" object)"]
    problems, commands, imported = [], [], 0
    # Visdom orders windows by "i"; keep that order so the panes come out in the same sequence.
    for win, window in sorted(jsons.items(), key=lambda kv: kv[1].get("i", 0) if isinstance(kv[1], dict) else 0):
        try:
            commands += [parse_event(ev) for ev in window_events(env, str(win), window)]
            imported += 1
        except EventError as exc:
            problems.append(f"{env}/{win}: skipped ({exc})")
    result = services.writer.submit_wait(commands, timeout=600)
    if result.failed:
        return 0, [f"{env}: could not be stored ({result.failed})"]
    problems += [f"{env}: {e['error']}" for e in result.errors]
    return imported - len(result.errors), problems


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="dash-server import-visdom",
                                description="import Visdom env files (~/.visdom/*.json); safe to re-run")
    p.add_argument("paths", nargs="+", help="env .json files, or directories holding them (e.g. ~/.visdom)")
    p.add_argument("--db", default="", help=f"SQLite file or database URL (default {default_db_path()})")
    p.add_argument("--env-prefix", default="", help="prepended to every imported env name")
    args = p.parse_args(argv)
    try:
        files = _files(args.paths)
    except FileNotFoundError as exc:
        print(f"dash-server import-visdom: {exc}", file=sys.stderr)
        return 2
    services = Services.open(Settings(db=args.db))
    services.start()
    problems: list[str] = []
    windows = 0
    try:
        for k, path in enumerate(files):
            env = (args.env_prefix + path.name[: -len(".json")] if path.name.endswith(".json") else path.name)
            env = env.replace("/", "_")
            _progress(k, len(files), env)
            try:
                n, errs = import_file(services, path, env)
            except (OSError, ValueError) as exc:
                n, errs = 0, [f"{path}: {exc}"]
            windows += n
            problems += errs
        _progress(len(files), len(files), "done")
        sys.stderr.write("\n")
    finally:
        services.stop()
    for line in problems:
        print(f"  {line}", file=sys.stderr)
    print(f"imported {windows} windows from {len(files)} env files ({len(problems)} problems)")
    return 1 if problems and not windows else 0
