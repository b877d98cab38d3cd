"""The sweep page in headless Chromium against a real server with trials run by the real Python agent."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import paneboard
from helpers.waiting import wait_for

pytest.importorskip("optuna")


def test_sweep_page_shows_state_best_and_trials_and_pauses(server, open_tab, tmp_path, monkeypatch):
    monkeypatch.setenv("PANEBOARD_HOME", str(tmp_path / "home"))
    sweep_id = paneboard.sweep({"name": "lr search", "method": "random", "run_cap": 5,
                                "metric": {"name": "loss", "goal": "minimize"},
                                "parameters": {"lr": {"min": 0.01, "max": 1.0}, "opt": {"values": ["adam", "sgd"]}}},
                               project="demo", server=server.url)

    def train() -> None:
        paneboard.init()
        for step in range(3):
            paneboard.log({"loss": paneboard.config.lr * (3 - step)})
        paneboard.finish()

    assert paneboard.agent(sweep_id, function=train, server=server.url, heartbeat_s=0.2) == 5
    best = server.get_json(f"/api/v1/sweeps/{sweep_id}")["best"]
    tab = open_tab(f"{server.url}/sweeps/{sweep_id}")
    page = tab.page
    page.wait_for_selector(".sweep-table tbody tr")
    assert page.locator(".sweep-table tbody tr").count() == 5
    assert page.locator(".sweep-state").inner_text() == "finished"
    assert f"trial {best['number']}" in page.locator(".sweep-best").inner_text()
    assert page.locator(".sweep-svg circle").count() == 5
    href = page.locator(".sweep-links a", has_text="HParams").get_attribute("href")
    assert href.endswith(f"hparams?q=tags%3Asweep-{sweep_id}")
    folder = Path(os.environ.get("PANEBOARD_SCREENSHOTS") or tmp_path)
    folder.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(folder / "sweep-page.png"), full_page=True)

    running = paneboard.sweep({"method": "random", "parameters": {"x": {"min": 0, "max": 1}}}, server=server.url)
    tab = open_tab(f"{server.url}/sweeps/{running}")
    tab.page.click("button.act-pause")
    assert wait_for(lambda: server.get_json(f"/api/v1/sweeps/{running}")["state"] == "paused")
    tab.page.click("button.act-resume")
    assert wait_for(lambda: server.get_json(f"/api/v1/sweeps/{running}")["state"] == "running")
    assert not tab.errors
