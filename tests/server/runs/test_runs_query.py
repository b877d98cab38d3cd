"""The run query language on its own: parsing, precedence, field resolution and error positions."""

from __future__ import annotations

import pytest

from paneboard.server.runs.query import MAX_DEPTH, QueryError, compile_query

RUNS = [
    {"env": "resnet_a", "status": "finished", "tags": ["baseline", "cifar"], "updated": 10.0,
     "config": {"lr": 0.001, "optim": {"name": "adam"}, "model.depth": 50, "amp": True, "seed": "7"},
     "summaries": {"loss": {"min": 0.2, "last": 0.3, "min_step": 90}, "val/acc": {"max": 0.95, "best": 0.95}},
     "provenance": {"host": "gpu1", "git": {"branch": "main", "dirty": False}}},
    {"env": "vit", "status": "crashed", "tags": [], "updated": 20.0, "config": {"lr": 0.1, "amp": False},
     "summaries": {"loss": {"min": 0.6, "last": 0.7}}, "provenance": {"host": "gpu2", "git": {"branch": "dev"}}},
    {"env": "bare", "status": None, "tags": [], "config": {}, "summaries": {}, "provenance": None},
]


def select(q):
    pred = compile_query(q)
    return [r["env"] for r in RUNS if pred(r)]


@pytest.mark.parametrize("q, want", [
    ("", ["resnet_a", "vit", "bare"]),
    ("lr < 0.01", ["resnet_a"]),
    ("lr >= 0.001", ["resnet_a", "vit"]),
    ("lr < 0.01 and tags:baseline and status:finished", ["resnet_a"]),
    ("loss.min < 0.3", ["resnet_a"]),
    ('val/acc.max >= 0.9 or name ~ "^vi"', ["resnet_a", "vit"]),
    ("loss < 0.5", ["resnet_a"]),                      # a bare series name is its last value
    ("loss.min_step = 90", ["resnet_a"]),
    ("optim.name = adam", ["resnet_a"]),               # a path into nested config
    ("model.depth = 50", ["resnet_a"]),                # a flat key holding a dot is found first
    ("config.lr = 0.1", ["vit"]),
    ("amp = true", ["resnet_a"]),
    ("amp:false", ["vit"]),
    ("seed = 7", ["resnet_a"]),                        # a number literal matches a numeric string
    ("not tags:baseline", ["vit", "bare"]),
    ("not (lr < 0.01 or status:crashed)", ["bare"]),
    ("lr < 0.01 or lr > 0.05 and status:finished", ["resnet_a"]),   # and binds tighter than or
    ("(lr < 0.01 or lr > 0.05) and status:finished", ["resnet_a"]),
    ("status != finished", ["vit"]),                   # a run without the field never compares unequal
    ("host:gpu2 or branch = main", ["resnet_a", "vit"]),
    ("dirty = false", ["resnet_a"]),
    ('tags ~ "^ci"', ["resnet_a"]),
    ('name !~ "a"', ["vit"]),
    ("updated > 15", ["vit"]),
    ("nosuch < 1 OR NOT nosuch < 1", ["resnet_a", "vit", "bare"]),
    ('name = "resnet_a"', ["resnet_a"]),
    ("lr < 1e-2", ["resnet_a"]),
])
def test_queries(q, want):
    assert select(q) == want


@pytest.mark.parametrize("q, pos, words", [
    ("lr <", 4, "expected a value"),
    ("lr < 0.01 and", 13, "expected a field"),
    ("(lr < 1", 7, "expected ')'"),
    ("lr % 3", 3, "unexpected character"),
    ("lr < 1 lr", 7, "expected 'and', 'or'"),
    ("and x", 0, "expected a field"),
    ("lr 3", 3, "expected an operator"),
    ('name ~ "["', 7, "bad regular expression"),
    ("name ~ 3", 7, "~ needs a string"),
    ('name = "open', 7, "unexpected character"),
    ("lr < true", 5, "needs a number or a string"),
    (")", 0, "expected a field"),
])
def test_errors_name_their_position(q, pos, words):
    with pytest.raises(QueryError) as err:
        compile_query(q)
    assert err.value.position == pos and words in err.value.message and f"position {pos}" in str(err.value)


def test_limits():
    with pytest.raises(QueryError):
        compile_query("lr < 1 and " * 500 + "lr < 1")
    with pytest.raises(QueryError, match="nested deeper"):
        compile_query("not " * (MAX_DEPTH + 2) + "lr < 1")
    assert compile_query("(" * 10 + "lr < 0.01" + ")" * 10)(RUNS[0])


def test_evaluation_sees_only_visible_runs_and_keeps_its_budget():
    import time

    from paneboard.server.runs.budget import QueryBudgetError, select

    seen = []

    def pred(run):
        seen.append(run["env"])
        return True
    assert [r["env"] for r in select(RUNS, pred, lambda env: env != "vit")] == ["resnet_a", "bare"]
    assert seen == ["resnet_a", "bare"]  # the hidden run was never evaluated (no timing probe of it)

    def slow(run):
        end = time.monotonic() + 0.02
        while time.monotonic() < end:
            pass
        return True
    with pytest.raises(QueryBudgetError, match="budget"):
        select(RUNS * 50, slow, budget_s=0.05)
