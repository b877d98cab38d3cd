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

    def close(self, *args: Any, **kwargs: Any) -> Any:
        """`close("win")` or `close(win=..., env=...)` deletes panes, as Client.close does; `close()` and
        `close(timeout)` flush and end the run, as SummaryWriter.close does."""
        if (args and isinstance(args[0], str)) or {"win", "env"} & kwargs.keys():
            return self.client.close(*args, **kwargs)
        return super().close(*args, **kwargs)
