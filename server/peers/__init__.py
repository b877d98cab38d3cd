"""Readers of other trackers\x27 stores (W&B, MLflow, Neptune exports) that feed `dash-server import`."""
