"""Smoke test of bench/run_all.py --quick: exits 0 and writes a table with every measure as numbers or reasoned n/a."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from helpers.paths import ROOT

NUM = r"-?[\d,]+(?:\.\d+)?"
NUMS = re.compile(rf"{NUM}(?: / {NUM})*")
NA = re.compile(r"n/a: \S.{3,}")  # an n/a always carries its reason


def _ok(cell: str, allow_na: bool) -> bool:
    if NUMS.fullmatch(cell):
        return True
    if allow_na and (cell == "—" or NA.fullmatch(cell)):
        return True
    # TensorBoard's cell holds both loaders: "legacy X · fast Y" (each a number or a reasoned n/a).
    parts = [p.split(" ", 1) for p in cell.split(" · ")]
    return len(parts) > 1 and all(len(p) == 2 and _ok(p[1], allow_na) for p in parts)


@pytest.mark.long
def test_run_all_quick_writes_every_measure(tmp_path: Path) -> None:
    committed = ROOT / "bench" / "RESULTS.md"
    before = committed.stat().st_mtime_ns if committed.exists() else None
    proc = subprocess.Popen([sys.executable, str(ROOT / "bench" / "run_all.py"), "--quick", "--no-profile",
                             "--out", str(tmp_path)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            cwd=ROOT)
    try:
        out, err = proc.communicate(timeout=480)
    except subprocess.TimeoutExpired:
        proc.terminate()  # run_all stops every server it started on SIGTERM (a kill would leave them running)
        out, err = proc.communicate(timeout=60)
        pytest.fail(f"bench/run_all.py --quick ran over 480 s:\n{out[-3000:]}{err[-3000:]}")
    assert proc.returncode == 0, out[-3000:] + err[-3000:]
    md = (tmp_path / "RESULTS.md").read_text()
    results = json.loads((tmp_path / "results.json").read_text())
    rows = results["table"]
    assert {r["measure"].split(".")[0] for r in rows} == {str(i) for i in range(1, 9)}
    for r in rows:
        # paneboard's own figures are numbers; only features still being written (optional rows) may be n/a.
        assert _ok(r["paneboard"], allow_na=r["optional"]), r
        assert _ok(r["visdom"], allow_na=True) and _ok(r["tensorboard"], allow_na=True), r
        assert r["pass"] in ("pass", "miss", "—", "n/a"), r
        assert f"| {r['measure']} | {r['paneboard']} |" in md
    assert "bench/run_all.py --quick" in md and "load avg" in md
    assert (committed.stat().st_mtime_ns if committed.exists() else None) == before  # --out left it alone


@pytest.mark.long
def test_redteam_quick_reports_no_failure() -> None:
    """bench/redteam.py --quick drives issue 30's attacks at a real dash-server: every one must hold."""
    proc = subprocess.run([sys.executable, str(ROOT / "bench" / "redteam.py"), "--quick"], capture_output=True,
                          text=True, timeout=240, cwd=ROOT)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    rows = [line.split() for line in proc.stdout.splitlines()[1:] if line and not line.startswith(" ")]
    assert len(rows) >= 9 and all(r[3] == "0" and r[1] == r[2] for r in rows), proc.stdout
