"""The type ratchet (tests/check_mypy.py) and ruff, as tests: they run with the suite on its workers, beside the
other tests, instead of after them on one core."""

from __future__ import annotations

import subprocess
import sys

import pytest

from helpers.paths import ROOT

pytestmark = pytest.mark.long  # mypy takes most of a minute: start it first


def test_mypy_ratchet_holds():
    proc = subprocess.run([sys.executable, str(ROOT / "tests" / "check_mypy.py")], cwd=ROOT, capture_output=True,
                          text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_ruff_finds_nothing():
    proc = subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", "."], cwd=ROOT, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
