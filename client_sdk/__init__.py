"""paneboard: non-blocking Visdom-style Python client for the paneboard experiment dashboard."""

from typing import Any

from .api import Api
from .client import Client
from .run_api import Artifact, Audio, Histogram, Html, Image, Object3D, Run, Table, Video
from .run_api.module import (
    alert,
    define_metric,
    finish,
    init,
    log,
    log_artifact,
    save,
    unwatch,
    use_artifact,
    watch,
)
from .tensorboard.writer import SummaryWriter  # torch.utils.tensorboard drop-in (no torch import)

__version__ = "0.1.0"

Visdom = Client  # drop-in name for code written against visdom.Visdom

# Training hooks load on first use, so `import paneboard` stays light (no psutil/torch imports).
_HOOKS = {"watch_dataloader", "WatchedLoader", "SystemMonitor", "ModelWatch", "alerts"}
# The current run's objects (W&B's wandb.run, wandb.config, wandb.summary): read at each access.
_RUN_STATE = {"run": lambda m: m.current, "config": lambda m: m.config,
              "summary": lambda m: None if m.current is None else m.current.summary}


module_unsupported = frozenset(("login", "restore", "mark_preempting", "link_model",
                                "use_model", "log_model", "Molecule", "Plotly", "Graph"))


def __getattr__(name: str) -> Any:
    if name == "show":  # notebooks: an env inline (no IPython import until used)
        from .notebook import show

        return show
    if name in ("sweep", "agent"):  # W&B's wandb.sweep / wandb.agent, against a dash-server
        from . import sweeps

        return getattr(sweeps, name)
    if name in _RUN_STATE:
        from .run_api import module

        return _RUN_STATE[name](module)
    if name in module_unsupported:
        from .run_api.module import unsupported

        return unsupported(name)
    if name in _HOOKS:
        from . import hooks

        return getattr(hooks, name)
    raise AttributeError(f"module 'paneboard' has no attribute {name!r}")


def load_ipython_extension(ipython: Any) -> None:
    """`%load_ext paneboard`: registers the %paneboard magic."""
    from .notebook import load_ipython_extension as load

    load(ipython)


__all__ = ["Api", "Artifact", "Audio", "Client", "Histogram", "Html", "Image", "Object3D", "Run", "SummaryWriter",
           "Table", "Video", "Visdom", "__version__", "alert", "define_metric", "finish", "init", "log",
           "log_artifact", "save", "show", "unwatch", "use_artifact", "watch", *sorted(_HOOKS)]
