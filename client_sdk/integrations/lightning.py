"""Lightning: PaneboardLogger (a Logger for Trainer(logger=...)) and PaneboardHooks (the training-loop hooks)."""

from __future__ import annotations

import os
import re
import time
from argparse import Namespace
from typing import Any

from .. import failures
from ..client import Client
from ._common import Connection, flat_config, log_hparams, missing_extra, number
from .experiment import RunWriter

try:
    from lightning.pytorch.callbacks import Callback
    from lightning.pytorch.loggers.logger import Logger, rank_zero_experiment
    from lightning.pytorch.utilities import rank_zero_only
except ImportError as first:  # the older package name
    try:
        from pytorch_lightning.callbacks import Callback  # type: ignore[no-redef,assignment]
        from pytorch_lightning.loggers.logger import Logger, rank_zero_experiment  # type: ignore[no-redef,assignment]
        from pytorch_lightning.utilities import rank_zero_only  # type: ignore[no-redef]
    except ImportError:
        raise missing_extra("lightning", "lightning (or pytorch_lightning)", first) from None


class PaneboardLogger(Logger):
    """Logs a Lightning run into the env `<name>/<version>` (or `env=`) of a dash-server, from rank zero only.

    Every metric is a line pane named as logged, x = the global step; Lightning's own `epoch` metric is a pane
    too, so any step maps to its epoch. Hyperparameters become the env's hparams session, with the last value
    of every metric attached at the end of the run. A run resumed with the same `version` appends to the env.

    log_model=True uploads the ModelCheckpoint's files (its top k and last) as versions of the artifact
    `model-<env>` at the end of training, "all" each checkpoint as soon as it is saved (as WandbLogger does);
    the best one has the alias "best". Uploads run in the background; the files are hard-linked first, so the
    callback may rotate them out meanwhile.
    """

    def __init__(self, env: str | None = None, name: str = "lightning_logs", version: int | str | None = None, *,
                 client: Client | None = None, server: str | None = None, port: int | None = None,
                 base_url: str | None = None, log_graph: bool = False, save_dir: str = ".",
                 log_model: bool | str = False) -> None:
        super().__init__()
        self._save_dir = save_dir
        self._name = name
        self._version = version if version is not None else time.strftime("version_%Y%m%d-%H%M%S")
        self._env = env or f"{name}/{self._version}"
        self._connect = Connection(client, server, port, base_url)
        self._log_graph = log_graph
        self._writer: RunWriter | None = None
        self._hparams: dict[str, Any] = {}
        self._last: dict[str, float] = {}
        if log_model not in (True, False, "all"):
            raise ValueError(f'log_model must be True, False or "all", got {log_model!r}')
        self._log_model = log_model
        self._checkpoint_callback: Any = None
        self._logged_checkpoints: dict[str, float] = {}  # path -> mtime when uploaded
        self.artifacts: list[Any] = []  # the ArtifactRefs of the uploaded checkpoints

    @property
    def name(self) -> str:
        return self._name

    @property
    def version(self) -> int | str:
        return self._version

    @property
    def save_dir(self) -> str:
        """Where Lightning keeps files of this run (checkpoints, LightningCLI's config): `<save_dir>/<name>/<version>`
        holds them, as with TensorBoardLogger; the metrics themselves go to the server."""
        return self._save_dir

    @property
    def log_dir(self) -> str:
        return os.path.join(self._save_dir, self._name, str(self._version))

    @property
    def env(self) -> str:
        return self._env

    @property
    def writer(self) -> RunWriter:
        """The paneboard.SummaryWriter this logger writes through (created on first use)."""
        if self._writer is None:
            self._writer = self._connect.writer_of(RunWriter, self._env)
        return self._writer

    @property
    @rank_zero_experiment
    def experiment(self) -> RunWriter:
        """The run's SummaryWriter, as TensorBoardLogger's: `self.logger.experiment.add_image(...)` and every
        other add_*; its `.client` (and the writer itself) take the Client's calls (`images`, `line`, ...)."""
        return self.writer

    @rank_zero_only
    def log_metrics(self, metrics: dict[str, Any], step: int | None = None) -> None:
        writer = self.writer
        for key, value in metrics.items():
            v = number(value)
            if v is None:
                continue
            writer.add_scalar(key, v, step if step is not None else 0)
            self._last[key] = v

    @rank_zero_only
    def log_hyperparams(self, params: dict[str, Any] | Namespace, metrics: dict[str, Any] | None = None,
                        *args: Any, **kwargs: Any) -> None:
        self._hparams.update(flat_config(params))
        initial = {k: v for k, v in ((k, number(v)) for k, v in (metrics or {}).items()) if v is not None}
        log_hparams(self.writer, dict(self._hparams), initial)

    @rank_zero_only
    def log_graph(self, model: Any, input_array: Any = None) -> None:
        if not self._log_graph:
            return
        sample = input_array if input_array is not None else getattr(model, "example_input_array", None)
        if sample is not None:
            self.writer.add_graph(model, sample)

    @rank_zero_only
    def after_save_checkpoint(self, checkpoint_callback: Any) -> None:
        path = getattr(checkpoint_callback, "best_model_path", "") or getattr(checkpoint_callback, "last_model_path", "")
        step = getattr(checkpoint_callback, "_last_global_step_saved", 0)
        self.writer.add_text("checkpoints", f"checkpoint saved: `{path}`", step if isinstance(step, int) else 0)
        if self._log_model == "all" or (self._log_model is True and getattr(checkpoint_callback, "save_top_k", 0) == -1):
            self._log_checkpoints(checkpoint_callback)  # every one is kept: no need to wait for the end
        elif self._log_model is True:
            self._checkpoint_callback = checkpoint_callback

    def _log_checkpoints(self, callback: Any) -> None:
        """Upload the callback's checkpoints not uploaded yet (or rewritten since), oldest first."""
        scores: dict[str, Any] = dict(getattr(callback, "best_k_models", None) or {})
        for path in (getattr(callback, "last_model_path", ""), getattr(callback, "best_model_path", "")):
            if path:
                scores.setdefault(path, None)
        best = getattr(callback, "best_model_path", "")
        found = [(os.path.getmtime(p), p) for p in scores if os.path.isfile(p)]
        for mtime, path in sorted(found):
            if self._logged_checkpoints.get(path) == mtime:
                continue
            self._logged_checkpoints[path] = mtime
            score = number(scores[path] if scores[path] is not None else
                           getattr(callback, "best_model_score", None) if path == best else None)
            steps = re.findall(r"step=(\d+)", os.path.basename(path))
            step = int(steps[-1]) if steps else getattr(callback, "_last_global_step_saved", None)
            self.artifacts.append(self.writer.client.log_artifact(
                path, name=f"model-{self._env}", type="model", aliases=["best"] if path == best else [],
                step=step, metadata={"score": score, "monitor": getattr(callback, "monitor", None),
                                     "original_filename": os.path.basename(path)}, snapshot=True))

    @rank_zero_only
    def save(self) -> None:
        """Nothing to write: every call above is already on its way to the server."""

    @rank_zero_only
    def finalize(self, status: str) -> None:
        if self._writer is None:
            return
        if self._checkpoint_callback is not None:
            self._log_checkpoints(self._checkpoint_callback)
        if self._hparams:  # the hparams table shows each run with the final value of its metrics
            log_hparams(self._writer, dict(self._hparams), dict(self._last))
        self._writer.add_text("status", f"run {status}")
        if status == "failed":  # Lightning calls this inside its except block, then re-raises: the run failed
            self._writer.client.end_run(failures.current(f"Lightning ended the run: {status}"))
        self._writer.flush(timeout=30)


class PaneboardHooks(Callback):
    """Turns on paneboard's training-loop hooks for a Lightning run: `watch(model)` (weight and gradient norms,
    learning rate, summary) and the system monitor, writing to the PaneboardLogger's env (or `client=`).

    The loader is the caller's to wrap: `trainer.fit(model, paneboard.watch_dataloader(loader, client))`, since
    Lightning builds and re-wraps its own loaders where no callback can reach them."""

    def __init__(self, client: Client | None = None, every: int = 50, monitor_interval: float = 1.0) -> None:
        self.client = client
        self.every, self.monitor_interval = every, monitor_interval
        self._handle: Any = None
        self._monitor: Any = None

    def _client(self, trainer: Any) -> Client | None:
        if self.client is not None:
            return self.client
        for logger in getattr(trainer, "loggers", []):
            if isinstance(logger, PaneboardLogger):
                return logger.writer.client
        return None

    @rank_zero_only
    def on_fit_start(self, trainer: Any, pl_module: Any) -> None:
        from ..hooks import watch

        client = self._client(trainer)
        if client is None:
            return
        optimizers = getattr(trainer, "optimizers", None) or [None]
        self._handle = watch(pl_module, client, optimizer=optimizers[0], every=self.every)
        self._monitor = client.monitor_system(interval=self.monitor_interval, step_fn=lambda: trainer.global_step)

    @rank_zero_only
    def on_fit_end(self, trainer: Any, pl_module: Any) -> None:
        if self._monitor is not None:
            self._monitor.stop()
        if self._handle is not None:
            self._handle.unwatch()
