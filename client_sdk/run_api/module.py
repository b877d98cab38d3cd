"""The module-level run API (`paneboard.init`, `log`, `finish` ...), W&B's names and semantics, on one current run."""

from __future__ import annotations

import json
import logging
import os
import re
from collections.abc import Sequence
from typing import Any

from .names import generated_name
from .run import Run
from .state import Config, config_dict

_logger = logging.getLogger("paneboard")
_MODES = {"online": "online", "run": "online", "offline": "offline", "dryrun": "offline", "disabled": "disabled"}

current: Run | None = None
config = Config()  # paneboard.config before init(): values set here go to the next run


def init(project: str | None = None, name: str | None = None, config: Any = None, tags: Sequence[str] | None = None,
         notes: str | None = None, group: str | None = None, job_type: str | None = None, id: str | None = None,  # noqa: A002
         resume: bool | str | None = None, dir: str | os.PathLike | None = None, mode: str | None = None,  # noqa: A002
         fork_from: str | None = None, *, server: str | None = None, port: int | None = None,
         config_exclude_keys: Sequence[str] | None = None, config_include_keys: Sequence[str] | None = None,
         **ignored: Any) -> Run:
    """Start a run (W&B's wandb.init): env `project/name`; a run without a name gets a generated one.

    mode "offline" spools everything for `paneboard sync`; "disabled" makes every call a no-op; default from
    PANEBOARD_MODE (or WANDB_MODE). W&B arguments with no meaning here (entity, reinit, settings ...) are ignored.
    """
    global current
    if ignored:
        _logger.debug("paneboard.init: ignoring %s", ", ".join(sorted(ignored)))
    if current is not None:
        current.finish()
    mode_name = mode or os.environ.get("PANEBOARD_MODE") or os.environ.get("WANDB_MODE") or "online"
    if mode_name not in _MODES:
        raise ValueError(f"paneboard.init: mode must be one of online, offline, disabled; got {mode_name!r}")
    mode_name = _MODES[mode_name]
    project = project or os.environ.get("PANEBOARD_PROJECT") or os.environ.get("WANDB_PROJECT") or None
    name = name or os.environ.get("WANDB_NAME") or id or generated_name()
    sweep = _sweep_trial()
    if sweep is not None:  # a sweep agent started this program: the trial's run, config and tag win (as W&B's)
        project, name = sweep["run"].split("/", 1)
        tags = [*(tags or ()), f"sweep-{sweep['id']}"]
    env = f"{project}/{name}" if project else name
    values = {**globals()["config"].as_dict(), **config_dict(config)}
    if sweep is not None:
        values.update(sweep["config"])
    if config_include_keys:
        values = {k: v for k, v in values.items() if k in config_include_keys}
    for k in config_exclude_keys or ():
        values.pop(k, None)
    values.update({k: v for k, v in (("group", group), ("job_type", job_type)) if v})
    run_dir = _run_dir(dir, env)
    cfg = Config()
    cfg.update(values)
    client = None
    if mode_name != "disabled":
        from ..client import Client

        fork_env, fork_step = _fork(fork_from, project)
        kw: dict[str, Any] = {k: v for k, v in (("server", server), ("port", port)) if v is not None}
        client = Client(env=env, tags=list(tags or ()), resume=resume not in (None, False, "never"),
                        fork_from=fork_env, fork_step=fork_step, offline=mode_name == "offline", **kw)
        if notes:
            client.note(notes)
        os.makedirs(run_dir, exist_ok=True)
    run = Run(client, env, name, project, id or name, run_dir, mode_name, cfg)
    run.on_finish = forget
    current = run
    globals()["config"] = cfg
    return run


def _sweep_trial() -> dict[str, Any] | None:
    """The sweep trial this process runs for a `paneboard agent` ({"id", "run", "config"}), None outside one."""
    run, sweep_id = os.environ.get("PANEBOARD_SWEEP_RUN"), os.environ.get("PANEBOARD_SWEEP_ID")
    if not run or not sweep_id or "/" not in run:
        return None
    try:
        config = json.loads(os.environ.get("PANEBOARD_SWEEP_CONFIG") or "{}")
    except ValueError:
        _logger.warning("paneboard.init: PANEBOARD_SWEEP_CONFIG is not JSON; the sweep's config is not applied")
        config = {}
    return {"id": sweep_id, "run": run, "config": config if isinstance(config, dict) else {}}


def _fork(fork_from: str | None, project: str | None) -> tuple[str | None, float | None]:
    """W&B's fork_from "<run id>?_step=<n>" as (env, step)."""
    if fork_from is None:
        return None, None
    m = re.fullmatch(r"([^?]+)\?_step=([0-9.]+)", fork_from)
    if m is None:
        raise ValueError(f"fork_from must be '<run id>?_step=<step>', got {fork_from!r}")
    run_id = m.group(1)
    return (run_id if "/" in run_id or not project else f"{project}/{run_id}"), float(m.group(2))


def forget(run: Run) -> None:
    """A finished run is no longer the current one."""
    global current, config
    if current is run:
        current = None
        config = Config()  # the next run starts from its own config, not this one's


def _run(what: str) -> Run:
    if current is None:
        raise RuntimeError(f"paneboard.{what}() needs a run: call paneboard.init() first")
    return current


def log(data: Any, step: int | None = None, commit: bool | None = None, sync: bool | None = None) -> None:
    """Log a dict of values to the current run (see Run.log)."""
    _run("log").log(data, step=step, commit=commit)


def finish(exit_code: int | None = None, quiet: bool | None = None) -> None:
    if current is not None:
        current.finish(exit_code)


def define_metric(name: str, step_metric: str | None = None, **kw: Any) -> None:
    _run("define_metric").define_metric(name, step_metric=step_metric, **kw)


def watch(models: Any, criterion: Any = None, log: str | None = "gradients", log_freq: int = 1000,  # noqa: A002
          idx: int | None = None, log_graph: bool = False, **kw: Any) -> Any:
    """W&B's watch(model, log=, log_freq=) on the current run: norms and histograms every log_freq steps.
    paneboard.watch(model, client, ...) (a Client as second argument) is the hooks' watch, as before."""
    from ..client import Client

    if isinstance(criterion, Client) or "client" in kw:
        from ..hooks import watch as hooks_watch

        return hooks_watch(models, criterion if isinstance(criterion, Client) else kw.pop("client"), **kw)
    return _run("watch").watch(models, criterion, log, log_freq, idx, log_graph)


def unwatch(models: Any = None) -> None:
    if current is not None:
        current.unwatch(models)


def alert(title: str, text: str, level: Any = None, wait_duration: Any = None) -> None:
    _run("alert").alert(title, text, level, wait_duration)


def save(glob_str: str | None = None, base_path: str | None = None, policy: str = "live") -> list[str]:
    """Not supported: says so and returns []; files are kept with paneboard.log_artifact(path)."""
    _logger.warning("paneboard.save(%r) is not supported: keep files with paneboard.log_artifact(path, type=...)",
                    glob_str)
    return []


def log_artifact(artifact_or_path: Any, name: str | None = None, type: str | None = None,  # noqa: A002
                 aliases: Sequence[str] | None = None, tags: Any = None) -> Any:
    return _run("log_artifact").log_artifact(artifact_or_path, name, type, aliases)


def use_artifact(artifact_or_name: Any, type: str | None = None, aliases: Any = None) -> Any:  # noqa: A002
    return _run("use_artifact").use_artifact(artifact_or_name)


def unsupported(name: str) -> Any:
    """A W&B call paneboard does not offer: a clear error naming the call, at the call (login: a no-op)."""
    def refuse(*_: Any, **__: Any) -> Any:
        if name == "login":
            return True  # nothing to log in to: a self-hosted server (PANEBOARD_TOKEN if it has a token)
        raise NotImplementedError(f"paneboard.{name} (wandb.{name}) is not supported by paneboard")

    return refuse


def _run_dir(base: str | os.PathLike | None, env: str) -> str:
    """The run's files folder: under `dir` as W&B's, else under PANEBOARD_HOME, never in the working directory
    (a `paneboard/` folder there would shadow the package for the next script run from it)."""
    folder = re.sub(r"[^\w.-]", "_", env)
    if base is not None:
        return os.path.join(os.fspath(base), "paneboard", folder)
    home = os.environ.get("PANEBOARD_HOME") or os.path.join(os.path.expanduser("~"), ".paneboard")
    return os.path.join(home, "runs", folder)

