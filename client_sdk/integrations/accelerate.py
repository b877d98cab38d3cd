"""Accelerate: PaneboardTracker, for Accelerator(log_with=[PaneboardTracker(...)])."""

from __future__ import annotations

from typing import Any

from ..client import Client
from ._common import Connection, flat_config, log_hparams, missing_extra, number

try:
    from accelerate.tracking import GeneralTracker, on_main_process
except ImportError as exc:
    raise missing_extra("accelerate", "accelerate", exc) from None


class PaneboardTracker(GeneralTracker):
    """Logs `accelerator.log(...)` values as line panes (x = step), `init_trackers(config=...)` as hparams."""

    name = "paneboard"
    requires_logging_directory = False

    @on_main_process
    def __init__(self, run_name: str, *, client: Client | None = None, server: str | None = None,
                 port: int | None = None, base_url: str | None = None) -> None:
        super().__init__()
        self.run_name = run_name
        self.writer = Connection(client, server, port, base_url).writer(run_name)
        self._config: dict[str, Any] = {}
        self._last: dict[str, float] = {}

    @property
    def tracker(self) -> Client:
        return self.writer.client

    @on_main_process
    def store_init_configuration(self, values: dict[str, Any]) -> None:
        self._config = flat_config(values)
        log_hparams(self.writer, dict(self._config), {})

    @on_main_process
    def log(self, values: dict[str, Any], step: int | None = None, **kwargs: Any) -> None:
        for key, value in values.items():
            v = number(value)
            if v is not None:
                self.writer.add_scalar(key, v, step or 0)
                self._last[key] = v
            elif isinstance(value, str):
                self.writer.add_text(key, value, step or 0)
            elif isinstance(value, dict):
                self.writer.add_scalars(key, {k: n for k, n in ((k, number(x)) for k, x in value.items())
                                              if n is not None}, step or 0)

    @on_main_process
    def finish(self) -> None:
        if self._config:
            log_hparams(self.writer, dict(self._config), dict(self._last))
        self.writer.flush(timeout=30)
