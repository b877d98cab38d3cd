"""Delivery of SDK events: the outbox (queue, in flight, spool), the sender thread, the callers' Transport."""

from .transport import Transport

__all__ = ["Transport"]
