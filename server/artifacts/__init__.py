"""Artifacts: the blob store behind them and their ops (versions, uses)."""
