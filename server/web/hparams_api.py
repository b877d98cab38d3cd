"""HParams read API: every run's hparams (add_hparams sessions, else its config) and final metrics across envs,
the axes worth drawing, and parameter importance against a metric (TensorBoard's HParams, W&B's sweeps view)."""

from __future__ import annotations

from flask import Blueprint, Response, request

from ..hparams import table as tables
from ..hparams.importance import importance
from .api import _env_or_404, _name
from .common import ApiError, env_visible, json_response, services
from .url_names import names_arg

bp = Blueprint("hparams_api", __name__, url_prefix="/api/v1")

def _envs() -> list[str] | None:
    listed = names_arg(request, "envs")
    if not listed:
        return None
    envs = [_name(n, "env") for n in dict.fromkeys(listed)]
    return [_env_or_404(n).name for n in envs]


def _metric(table: tables.Table) -> str | None:
    metric = request.args.get("metric")
    if metric is None or metric == "":
        return tables.default_metric(table)
    if metric not in table.metrics:
        raise ApiError(400, f"metric {metric!r} is not a metric of these runs", metrics=table.metrics[:50])
    return metric


@bp.get("/hparams")
def hparams() -> Response:
    """Rows, hparam columns (type, domain, count, distinct, varying, log), metric names, the default metric and
    the default axes ("h:<hparam>" / "m:<metric>")."""
    table = tables.collect(services().store, _envs(), env_visible)
    cols = tables.columns(table)
    metric = _metric(table)
    return json_response({"hparams": cols, "metrics": table.metrics, "metric": metric,
                          "axes": tables.default_axes(cols, table, metric), "sessions": table.rows})


@bp.get("/hparams/importance")
def hparams_importance() -> Response:
    """Correlation and random-forest importance of every varying hparam against ?metric= (default: the page's)."""
    table = tables.collect(services().store, _envs(), env_visible)
    metric = _metric(table)
    if metric is None:
        return json_response({"metric": None, "rows": 0, "params": [], "trees": 0, "truncated": False})
    return json_response(importance(table.rows, tables.columns(table), metric))
