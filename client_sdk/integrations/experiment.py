"""A logger's `experiment`: the run's SummaryWriter, which also answers every paneboard.Client call."""

from __future__ import annotations

from typing import Any

from ..tensorboard.writer import SummaryWriter


class RunWriter(SummaryWriter):
    """What `logger.experiment` is: code moving from TensorBoardLogger calls `add_image`, `add_histogram`,
    `add_figure`... on it, as on torch's SummaryWriter; code written for the Visdom surface reaches the run's
    Client through `.client`, or directly (`experiment.images(...)`, `experiment.line(...)`)."""

    def __getattr__(self, name: str) -> Any:
        # Only reached for names a SummaryWriter lacks: the Client's Visdom calls and attributes.
        if name.startswith("__") or name == "client":  # not set yet (copy, unpickling): no recursion
            raise AttributeError(name)
        return getattr(self.client, name)

    def close(self, win: Any = None, env: str | None = None, *, timeout: float | None = None) -> Any:
        """`close("win")` deletes a pane, as Client.close does; `close()` flushes, as SummaryWriter.close does."""
        if isinstance(win, str) or env is not None:
            return self.client.close(win, env)
        return super().close(win if win is not None else timeout)
