"""Install tests/requirements.lock and this project (editable) into the active venv, one pip per CPU."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

TESTS = Path(__file__).resolve().parent
LOCK = TESTS / "requirements.lock"
# pip installs one package after another on one core, most of the time in its own Python (reading each
# package's index page, unpacking wheels). The lock pins every package, so with --no-deps its lines install
# independently: a share of them per core, each share its own pip, in one venv.
MAX_PIPS = 4  # a many-core machine should not open dozens of pips on the index at once
PIP = ["-m", "pip", "install", "--quiet", "--no-deps",
       "--no-compile"]  # bytecode is written at first import: most installed modules are never imported
# The pip a new venv brings (Python 3.11's ensurepip: 23.2) spends most of an install checking every link of every
# index page against the platform's tags, which later releases do much faster. Pinned, like the lock.
PIP_VERSION = "26.3"


def pinned(lock: Path) -> list[str]:
    """The lock's requirements, one per line, without pip-compile's `# via` notes."""
    lines = (line.split("#", 1)[0].strip() for line in lock.read_text().splitlines())
    return [line for line in lines if line and not line.startswith("-")]


def shares(requirements: list[str], n: int) -> list[list[str]]:
    return [requirements[i::n] for i in range(n)]


def main() -> int:
    if sys.prefix == sys.base_prefix:
        print("install_lock: activate a virtual environment first (README: python3 -m venv .venv)", file=sys.stderr)
        return 2
    requirements = pinned(LOCK)
    # pip 26 no longer applies PIP_CONSTRAINT inside build environments (visdom's sdist is built in one): the
    # same file goes in as a build constraint too.
    constraints = str(TESTS / "build-constraints.txt")
    env = {**os.environ, "PIP_CONSTRAINT": constraints, "PIP_BUILD_CONSTRAINT": constraints}
    if subprocess.run([sys.executable, *PIP, f"pip=={PIP_VERSION}"], env=env).returncode != 0:
        print(f"install_lock: could not install pip=={PIP_VERSION}", file=sys.stderr)
        return 1
    with tempfile.TemporaryDirectory() as tmp:
        procs = []
        for i, share in enumerate(shares(requirements, min(MAX_PIPS, os.cpu_count() or 1))):
            part = Path(tmp) / f"share-{i}.txt"
            part.write_text("\n".join(share) + "\n")
            editable = ["-e", str(TESTS.parent)] if i == 0 else []
            procs.append(subprocess.Popen([sys.executable, *PIP, "-r", str(part), *editable], env=env))
        failed = [p.args for p in procs if p.wait() != 0]
    for args in failed:
        print(f"install_lock: failed: {' '.join(map(str, args))}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
