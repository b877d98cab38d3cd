"""Accelerate's tracking API logging through PaneboardTracker into a real server."""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("torch")
accelerate = pytest.importorskip("accelerate")

from paneboard.integrations.accelerate import PaneboardTracker  # noqa: E402


def test_logged_values_and_the_config_arrive(server: Any):
    tracker = PaneboardTracker("acc-run", server="http://127.0.0.1", port=server.port)
    acc = accelerate.Accelerator(log_with=[tracker], cpu=True)
    acc.init_trackers("acc-run", config={"lr": 0.01, "model": {"width": 32}, "seed": 1})
    for step in range(5):
        acc.log({"loss": 1.0 / (step + 1), "phase": "warmup" if step < 2 else "main"}, step=step)
    assert acc.get_tracker("paneboard").tracker is tracker.writer.client
    acc.end_training()
    loss = server.series("acc-run", "loss")["loss"]
    assert [x for x, _ in loss] == [0, 1, 2, 3, 4] and loss[0][1] == 1.0
    (session,) = server.get_json("/api/v1/hparams?envs=acc-run")["sessions"]
    assert session["hparams"] == {"lr": 0.01, "model/width": 32, "seed": 1}
    assert session["metrics"]["loss"] == pytest.approx(0.2)
