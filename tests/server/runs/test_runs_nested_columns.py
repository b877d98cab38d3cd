"""The runs listing's config columns for nested config (ui-polish, issue 42): one column per leaf, named by the
dotted path the runs query accepts (`model.depth`), and sorting by such a column orders by the nested value."""

from __future__ import annotations

import pytest

from paneboard.server.app import create_app
from paneboard.server.services import Services
from paneboard.server.settings import Settings


@pytest.fixture
def api(tmp_path):
    settings = Settings(db=str(tmp_path / "pb.db"))
    svc = Services.open(settings)
    svc.start()
    yield create_app(settings, svc).test_client()
    svc.stop()


def configure(api, env: str, config: dict) -> None:
    r = api.post("/api/v1/events", json={"events": [{"op": "run_config", "env": env, "config": config}]})
    assert r.status_code == 200 and r.get_json()["ok"], r.get_json()


def test_nested_config_is_listed_as_dotted_columns_the_query_and_sort_accept(api):
    configure(api, "deep", {"lr": 0.1, "model": {"depth": 8, "act": "gelu", "head": {"dim": 64}}, "tags": [1, 2],
                            "empty": {}, "a.b": 1})
    configure(api, "shallow", {"lr": 0.2, "model": {"depth": 2, "act": "relu"}})
    body = api.get("/api/v1/runs?limit=50").get_json()
    # Leaves only: no "model" column of JSON text; lists and empty dicts are values; a dotted key stays one key.
    assert body["columns"]["config"] == ["a.b", "empty", "lr", "model.act", "model.depth", "model.head.dim", "tags"]
    # The same names select and sort runs.
    assert [r["env"] for r in api.get("/api/v1/runs", query_string={"q": "model.depth = 8"}).get_json()["runs"]] == ["deep"]
    for order, expect in (("asc", ["shallow", "deep"]), ("desc", ["deep", "shallow"])):
        page = api.get(f"/api/v1/runs?sort=config:model.depth&order={order}").get_json()
        assert [r["env"] for r in page["runs"]] == expect, order
    page = api.get("/api/v1/runs?sort=config:model.head.dim&order=desc").get_json()
    assert [r["env"] for r in page["runs"]] == ["deep", "shallow"]  # a run without the key sorts last
