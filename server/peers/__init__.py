"""Readers of other trackers' stores (W&B, MLflow, Neptune exports) that feed `dash-server import`."""
