"""Sweeps: W&B's sweep files, trials suggested and pruned by Optuna on the server, agents that run them."""
