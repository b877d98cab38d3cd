"""The wire vocabulary the SDK and dash-server share: pane kinds, event ops, name and payload limits.

The server imports these (it may import the SDK; the SDK never imports the server), so a limit is written
once; tests/test_kind_registry.py checks the JS registry and the server's against KIND_NAMES.
"""

from __future__ import annotations

import os

# Pane kinds, each owned by one module under server/panes/ and one under static/js/panes/.
KIND_NAMES = ("line", "scatter", "text", "image", "figure", "properties", "network", "embeddings", "model_graph",
              "histogram", "media", "pr_curve", "projector")
# Event ops: pane ops, then env-wide ops (server/envops.py).
OPS = ("set", "update", "close", "delete_env", "fork_env", "rename_env", "layout", "save_view", "load_view",
       "set_meta", "custom_scalars", "hparams", "run_start", "run_end", "run_config", "run_tags", "run_note", "run_best")

MAX_NAME = 256           # env, window and hparam names, in characters
MAX_BUCKETS = 20_000     # histogram buckets per record
MAX_TAGS = 64           # tags per run
MAX_TAG = 64            # characters per tag
MAX_NOTE_BYTES = 64 * 1024        # a run's markdown note, UTF-8
MAX_DIFF_BYTES = 256 * 1024       # the git diff kept in a run's provenance (the SDK cuts it to this)
MAX_PACKAGES = 2_000              # installed distributions listed in a run's provenance
MAX_PROVENANCE_BYTES = 1024 * 1024
MAX_ERROR_BYTES = 64 * 1024       # a failed run's traceback, UTF-8 (the SDK keeps its end)
PR_FIELDS = ("tp", "fp", "tn", "fn", "precision", "recall")  # a PR-curve record's rows, in this order


def new_win_id() -> str:
    """Client-side window id (Visdom lets the server pick; we must not wait for a round trip)."""
    return "window_" + os.urandom(6).hex()
