"""Type-check server/ and client_sdk/ with mypy against a ratchet: `python tests/check_mypy.py`.

Files under ZERO_ERRORS must have no mypy error at all. Every other file may have at most the errors that
tests/mypy_baseline.txt grants it, so new code cannot add errors while old ones are fixed file by file;
a file below its count makes the script print the line to shrink (or run it with --update-baseline).

mypy cannot follow the editable install's import hook (client_sdk/ installs as `paneboard`, server/ as
`paneboard.server`), so build/mypy-path/paneboard/ is first rebuilt as links mirroring the installed
layout; pyproject.toml's [tool.mypy] points mypy_path there and holds every other setting.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TREE = ROOT / "build" / "mypy-path" / "paneboard"
BASELINE = ROOT / "tests" / "mypy_baseline.txt"
# The ingest path and the store it writes through (pyproject.toml makes them strict, too).
ZERO_ERRORS = ("server/store/", "server/panes/", "server/ingest/", "server/commands/", "server/dispatch/", "server/live/",
               "server/web/sockets.py", "server/web/frames.py", "client_sdk/transport/", "server/projection/")
ERROR_LINE = re.compile(r"^(?P<path>[^:\s]+\.py):\d+(?::\d+)?: error: ")


def link_tree() -> None:
    """build/mypy-path/paneboard/: client_sdk's entries, plus server/ as its `server` subpackage."""
    shutil.rmtree(TREE, ignore_errors=True)
    TREE.mkdir(parents=True)
    for entry in sorted((ROOT / "client_sdk").iterdir()):
        if entry.name != "__pycache__":
            (TREE / entry.name).symlink_to(os.path.relpath(entry, TREE))
    (TREE / "server").symlink_to(os.path.relpath(ROOT / "server", TREE))


def repo_path(mypy_path: str) -> str:
    """build/mypy-path/paneboard/server/x.py -> server/x.py; .../paneboard/x.py -> client_sdk/x.py."""
    rel = Path(mypy_path).resolve().relative_to(ROOT) if Path(mypy_path).is_absolute() else Path(mypy_path)
    parts = rel.parts
    if parts[:3] == ("build", "mypy-path", "paneboard"):
        inner = parts[3:]
        return "/".join(inner) if inner[0] == "server" else "/".join(("client_sdk", *inner))
    return rel.as_posix()


def run_mypy() -> tuple[Counter[str], list[str], int]:
    mypy = [sys.executable, "-m", "mypy"]
    if subprocess.run([*mypy, "--version"], capture_output=True).returncode != 0:
        mypy = [str(ROOT / ".venv" / "bin" / "python"), "-m", "mypy"]  # run with a Python that lacks mypy
    proc = subprocess.run([*mypy, "-p", "paneboard"], cwd=ROOT, capture_output=True, text=True)
    counts: Counter[str] = Counter()
    lines: list[str] = []
    for line in proc.stdout.splitlines():
        m = ERROR_LINE.match(line)
        if m:
            path = repo_path(m["path"])
            counts[path] += 1
            lines.append(path + line[len(m["path"]):])
    return counts, lines, proc.returncode if proc.returncode != 1 else 0


def read_baseline() -> dict[str, int]:
    allowed = {}
    for line in BASELINE.read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            count, path = line.split(maxsplit=1)
            allowed[path] = int(count)
    return allowed


def write_baseline(counts: Counter[str]) -> None:
    rows = [f"{n} {path}" for path, n in sorted(counts.items()) if not path.startswith(ZERO_ERRORS)]
    BASELINE.write_text("# mypy errors per file that tests/check_mypy.py still tolerates; lower them as you fix.\n"
                        "# Regenerate with: python tests/check_mypy.py --update-baseline\n" + "\n".join(rows) + "\n")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--update-baseline", action="store_true", help="rewrite tests/mypy_baseline.txt")
    args = parser.parse_args()
    link_tree()
    counts, lines, crashed = run_mypy()
    if crashed:
        print(f"mypy did not run to completion (exit status {crashed})", file=sys.stderr)
        return 2
    server = sum(n for p, n in counts.items() if p.startswith("server/"))
    sdk = sum(n for p, n in counts.items() if p.startswith("client_sdk/"))
    print(f"mypy: {server} errors in server/, {sdk} in client_sdk/")
    if args.update_baseline:
        write_baseline(counts)
        print(f"wrote {BASELINE.relative_to(ROOT)}")
    allowed = read_baseline()
    failed = False
    for path, n in sorted(counts.items()):
        limit = 0 if path.startswith(ZERO_ERRORS) else allowed.get(path, 0)
        if n > limit:
            failed = True
            print(f"\n{path}: {n} errors, at most {limit} allowed:")
            print("\n".join(line for line in lines if line.startswith(path + ":")))
    for path, limit in sorted(allowed.items()):
        if counts.get(path, 0) < limit:
            print(f"{path}: {counts.get(path, 0)} errors, below its baseline of {limit}: "
                  "lower it in tests/mypy_baseline.txt (or run with --update-baseline)")
    if failed:
        print("\nmypy check failed: fix the errors above (the zero-error files must stay clean).")
        return 1
    print("mypy check passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
