"""Hugging Face Trainer: PaneboardCallback, a TrainerCallback that logs a run into a dash-server env."""

from __future__ import annotations

import os
from typing import Any

from ..client import Client
from ._common import Connection, flat_config, log_hparams, missing_extra, number

try:
    from transformers import TrainerCallback
except ImportError as exc:
    raise missing_extra("transformers", "transformers", exc) from None


def tag_of(key: str) -> str:
    """The Trainer's log keys as its own TensorBoard callback groups them: eval_* under eval/, the rest train/."""
    if key.startswith("eval_"):
        return "eval/" + key[len("eval_"):]
    if key.startswith("test_"):
        return "test/" + key[len("test_"):]
    return "train/" + key


class PaneboardCallback(TrainerCallback):
    """`Trainer(callbacks=[PaneboardCallback(env=...)])`: logs, evaluations, checkpoints, config and model.

    Only the world's main process writes. The env defaults to TrainingArguments.run_name (else output_dir).
    Each logged number is a point of pane `train/<key>` or `eval/<key>` at x = state.global_step; the
    TrainingArguments and the model config become the env's hparams, with the last eval metrics at the end.
    log_checkpoints=True uploads each `checkpoint-<step>` folder the Trainer saves (every `save_steps`) as a
    version of the artifact `checkpoint-<env>`, in the background (hard-linked first: rotation may delete it).
    """

    def __init__(self, env: str | None = None, *, client: Client | None = None, server: str | None = None,
                 port: int | None = None, base_url: str | None = None, log_checkpoints: bool = False) -> None:
        self._env = env
        self._log_checkpoints = log_checkpoints
        self.artifacts: list[Any] = []  # the ArtifactRefs of the uploaded checkpoints
        self._connect = Connection(client, server, port, base_url)
        self.writer: Any = None
        self._hparams: dict[str, Any] = {}
        self._final: dict[str, float] = {}

    def _ensure(self, args: Any) -> Any:
        if self.writer is None:
            env = self._env or getattr(args, "run_name", None) or getattr(args, "output_dir", None) or "hf_trainer"
            self.writer = self._connect.writer(str(env))
        return self.writer

    def on_train_begin(self, args: Any, state: Any, control: Any, model: Any = None, **kwargs: Any) -> None:
        if not state.is_world_process_zero:
            return
        writer = self._ensure(args)
        self._hparams = {f"args/{k}": v for k, v in flat_config(args.to_dict()).items()}
        config = getattr(model, "config", None)
        if config is not None:
            self._hparams.update({f"model/{k}": v for k, v in flat_config(config).items()})
        log_hparams(writer, dict(self._hparams), {})
        if model is not None:
            params = sum(p.numel() for p in model.parameters())
            writer.add_text("model", f"**{type(model).__name__}**, {params:,} parameters\n\n```\n{model}\n```")

    def on_log(self, args: Any, state: Any, control: Any, logs: dict[str, Any] | None = None,
               **kwargs: Any) -> None:
        if not state.is_world_process_zero or not logs:
            return
        writer = self._ensure(args)
        for key, value in logs.items():
            v = number(value)
            if v is not None:
                writer.add_scalar(tag_of(key), v, state.global_step)

    def on_evaluate(self, args: Any, state: Any, control: Any, metrics: dict[str, Any] | None = None,
                    **kwargs: Any) -> None:
        # The Trainer also passes these to on_log, which draws them; here they are kept for the hparams table.
        if state.is_world_process_zero and metrics:
            self._final.update({tag_of(k): v for k, v in ((k, number(v)) for k, v in metrics.items())
                                if v is not None})

    def on_save(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        if state.is_world_process_zero:
            writer = self._ensure(args)
            writer.add_text("checkpoints", f"checkpoint saved at step {state.global_step}", state.global_step)
            folder = os.path.join(args.output_dir, f"checkpoint-{state.global_step}")  # the Trainer's naming
            if self._log_checkpoints and os.path.isdir(folder):
                self.artifacts.append(writer.client.log_artifact(
                    folder, name=f"checkpoint-{writer.client.env}", type="checkpoint", step=state.global_step,
                    metadata={"epoch": state.epoch}, snapshot=True))

    def on_train_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        if not state.is_world_process_zero or self.writer is None:
            return
        for entry in reversed(state.log_history):  # the last training loss, if no evaluation ran
            if "loss" in entry and "train/loss" not in self._final:
                self._final["train/loss"] = float(entry["loss"])
        log_hparams(self.writer, dict(self._hparams), dict(self._final))
        self.writer.flush(timeout=30)
