"""The sweep page of a sweep with more trials than one table page: newest page first, older pages on demand."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from paneboard.server.store.sweep_records import TrialRecord

pytest.importorskip("optuna")


def test_a_long_sweep_shows_its_newest_page_and_pages_back(server, open_tab, tmp_path):
    svc = server.app.services
    sweep_id = svc.sweeps.create({"method": "random", "metric": {"name": "loss", "goal": "minimize"},
                                  "parameters": {"x": {"min": 0.0, "max": 1.0}}}, "long").id
    with svc.store.sweep_session(sweep_id) as session:
        for k in range(150):
            session.put_trial(TrialRecord(sweep_id=sweep_id, number=k, state="finished", params={"x": k / 150},
                                          config={"x": k / 150}, run=f"long/{sweep_id}-{k}", agent="seed",
                                          value=(k / 150 - 0.3) ** 2, steps=1, last=1.0, created=time.time()))
    page = open_tab(f"{server.url}/sweeps/{sweep_id}").page
    page.wait_for_selector(".sweep-table tbody tr")
    rows = page.locator(".sweep-table tbody tr")
    assert rows.count() == 100 and rows.first.locator("td").first.inner_text() == "149"
    assert "trials 1–100 of 150" in page.locator(".sweep-pager").inner_text()
    assert page.locator(".sweep-svg circle").count() == 150  # the chart has every trial, not only the page's
    assert "trial 45" in page.locator(".sweep-best").inner_text()
    page.click("button.page-older")
    page.wait_for_selector(".sweep-pager:has-text('trials 101–150 of 150')")
    assert rows.count() == 50
    assert rows.first.locator("td").first.inner_text() == "49"
    assert page.locator("button.page-older").is_disabled()
    folder = Path(os.environ.get("PANEBOARD_SCREENSHOTS") or tmp_path)
    folder.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(folder / "sweep-page-older.png"), full_page=True)
