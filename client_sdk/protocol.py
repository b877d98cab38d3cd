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
PR_FIELDS = ("tp", "fp", "tn", "fn", "precision", "recall")  # a PR-curve record's rows, in this order
# The x-axis title of TensorBoard scalar panes, one rule for both ways in: paneboard.SummaryWriter (live) and
# import-tb / --logdir (server/tensorboard/decode.py). TensorBoard's own x axis is the step.
TB_XLABEL = "step"


def new_win_id() -> str:
    """Client-side window id (Visdom lets the server pick; we must not wait for a round trip)."""
    return "window_" + os.urandom(6).hex()


def visdom_text(content: object) -> str:
    """A Visdom text() content as Visdom's page shows it. Visdom stores the JSON as sent and its page sets
    innerHTML to it, so a list shows as JavaScript's String(list): items joined by ",", null as "", nested
    lists flattened the same way (torchnet's and faster-rcnn's loggers send lists)."""
    if isinstance(content, str):
        return content
    if content is None:
        return ""
    if isinstance(content, bool):
        return "true" if content else "false"
    if isinstance(content, (list, tuple)):
        return ",".join("" if v is None else visdom_text(v) for v in content)
    if isinstance(content, float):
        if content.is_integer() and abs(content) < 1e21:
            return str(int(content))  # JavaScript has one number type: 2.0 prints as "2"
        return repr(content)
    if isinstance(content, dict):
        return "[object Object]"
    return str(content)
