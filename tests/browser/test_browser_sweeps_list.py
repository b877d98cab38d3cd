"""The list of sweeps (/sweeps) in headless Chromium: reached from the top bar, one row per sweep, links to each."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import paneboard

pytest.importorskip("optuna")


def _finished_sweep(server) -> str:
    sweep_id = paneboard.sweep({"name": "lr search", "method": "random", "run_cap": 3,
                                "metric": {"name": "loss", "goal": "minimize"},
                                "parameters": {"lr": {"min": 0.01, "max": 1.0}}}, project="demo", server=server.url)

    def train() -> None:
        paneboard.init()
        paneboard.log({"loss": paneboard.config.lr})
        paneboard.finish()

    assert paneboard.agent(sweep_id, function=train, server=server.url, heartbeat_s=0.2) == 3
    return sweep_id


def test_sweeps_list_shows_every_sweep_and_is_in_the_top_bar(server, open_tab, tmp_path, monkeypatch):
    monkeypatch.setenv("PANEBOARD_HOME", str(tmp_path / "home"))
    done = _finished_sweep(server)
    best = server.get_json(f"/api/v1/sweeps/{done}")["best"]["value"]
    busy = paneboard.sweep({"method": "bayes", "metric": {"name": "acc", "goal": "maximize"},
                            "parameters": {"x": {"min": 0, "max": 1}}}, project="demo", server=server.url)
    for agent in ("gpu-a", "gpu-b"):  # two agents at work; one of them fails a trial and takes the next
        server.http("POST", f"/api/v1/sweeps/{busy}/next", {"agent": agent, "heartbeat_s": 600})
    server.http("POST", f"/api/v1/sweeps/{busy}/trials/1/finish", {"agent": "gpu-b", "exit_code": 2})
    server.http("POST", f"/api/v1/sweeps/{busy}/next", {"agent": "gpu-b", "heartbeat_s": 600})

    listed = server.get_json("/api/v1/sweeps")["sweeps"]
    assert [s["id"] for s in listed] == [busy, done]
    assert listed[0]["counts"]["running"] == 2 and listed[0]["counts"]["failed"] == 1 and listed[0]["agents_alive"] == 2
    assert listed[1]["best"]["value"] == best and listed[1]["agents_alive"] == 0

    home = open_tab(server.url + "/")
    home.page.click("#nav-sweeps")
    home.page.wait_for_url(f"{server.url}/sweeps")
    page = home.page
    page.wait_for_selector(".sweeps-table tbody tr")
    rows = page.locator(".sweeps-table tbody tr")
    assert rows.count() == 2
    first, second = rows.nth(0), rows.nth(1)
    assert first.get_attribute("data-sweep") == busy
    assert first.locator(".col-state").inner_text() == "running"
    assert first.locator(".col-method").inner_text() == "bayes"
    assert first.locator(".col-metric").inner_text() == "acc (max)"
    assert first.locator(".col-agents").inner_text() == "2"
    assert first.locator(".count-chip.state-running").inner_text() == "2 running"
    assert first.locator(".count-chip.state-failed").inner_text() == "1 failed"
    assert first.locator(".col-best").inner_text() == "–"
    assert second.locator(".col-state").inner_text() == "finished"
    assert second.locator(".col-sweep a").inner_text() == "lr search"
    assert float(second.locator(".col-best").inner_text()) == pytest.approx(best, rel=1e-3)
    assert second.locator(".count-chip.state-finished").inner_text() == "3 finished"
    assert second.locator(".col-created time").count() == 1
    assert page.locator("#nav-sweeps").evaluate("el => getComputedStyle(el).fontWeight") == "600"

    folder = Path(os.environ.get("PANEBOARD_SCREENSHOTS") or tmp_path)
    folder.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(folder / "sweeps-list-light.png"), full_page=True)
    for name, width, scheme in (("dark", 1280, "dark"), ("390", 390, "light")):
        other = open_tab(f"{server.url}/sweeps", width=width, scheme=scheme)
        other.page.wait_for_selector(".sweeps-table tbody tr")
        other.page.screenshot(path=str(folder / f"sweeps-list-{name}.png"), full_page=True)
        if width == 390:  # the narrow table fits, its last column too: nothing to scroll sideways to
            assert other.page.evaluate("document.querySelector('.sweeps-list').scrollWidth") <= 390 - 16
            assert other.page.locator(".col-agents").first.is_visible()
        assert not other.errors

    second.locator(".col-sweep a").click()
    page.wait_for_url(f"{server.url}/sweeps/{done}")
    page.wait_for_selector(".sweep-table tbody tr")
    assert page.locator(".sweep-table tbody tr").count() == 3
    assert not home.errors
