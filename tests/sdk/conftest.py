"""Fixtures of the SDK's tests: a real server the module-level run API (paneboard.init/log) talks to."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

import paneboard


@pytest.fixture
def online(server: Any, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """The test's server as PANEBOARD_URL, no mode or project from the environment; the current run is finished
    after the test, as a script's exit would."""
    monkeypatch.setenv("PANEBOARD_URL", server.url)
    for var in ("PANEBOARD_MODE", "WANDB_MODE", "PANEBOARD_PROJECT", "WANDB_PROJECT", "WANDB_NAME"):
        monkeypatch.delenv(var, raising=False)
    yield server
    paneboard.finish()
