"""paneboard: non-blocking Visdom-style Python client for the paneboard experiment dashboard."""

from typing import Any

from .api import Api
from .client import Client
from .tensorboard.writer import SummaryWriter  # torch.utils.tensorboard drop-in (no torch import)

__version__ = "0.1.0"

Visdom = Client  # drop-in name for code written against visdom.Visdom

# Training hooks load on first use, so `import paneboard` stays light (no psutil/torch imports).
_HOOKS = {"watch_dataloader", "WatchedLoader", "SystemMonitor", "watch", "ModelWatch", "alerts"}


def __getattr__(name: str) -> Any:
    if name == "show":  # notebooks: an env inline (no IPython import until used)
        from .notebook import show

        return show
    if name in _HOOKS:
        from . import hooks

        return getattr(hooks, name)
    raise AttributeError(f"module 'paneboard' has no attribute {name!r}")


def load_ipython_extension(ipython: Any) -> None:
    """`%load_ext paneboard`: registers the %paneboard magic."""
    from .notebook import load_ipython_extension as load

    load(ipython)


__all__ = ["Api", "Client", "SummaryWriter", "Visdom", "__version__", "show", *sorted(_HOOKS)]
