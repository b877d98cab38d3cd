"""Delivery of SDK events: the bounded queue, the sender thread, the on-disk spool."""
