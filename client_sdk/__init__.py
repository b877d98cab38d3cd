"""paneboard: non-blocking Visdom-style Python client for the paneboard experiment dashboard."""

from .client import Client

__version__ = "0.1.0"

Visdom = Client  # drop-in name for code written against visdom.Visdom

__all__ = ["Client", "Visdom", "__version__"]
