"""Provenance package lists and git diffs stored once by content: the same run answers, one row per distinct
part, none left behind by deletes, and migration 0011 moving the parts of a database made at the previous head."""

from __future__ import annotations

import pytest
from alembic import command
from sqlalchemy import func, inspect, select

from paneboard.server.app import create_app
from paneboard.server.services import Services
from paneboard.server.settings import Settings
from paneboard.server.store.dialect import create_engine_for
from paneboard.server.store.models import env_t, part_t, run_t
from paneboard.server.store.schema import alembic_config

TORCH_ENV = [f"pkg{i}=={i}.0.{i % 7}" for i in range(200)]  # the list every run of one environment reports
OTHER_ENV = TORCH_ENV[:150] + ["numpy==2.1.0"]


class Api:
    """The real services and app on one database, restartable (the migration test stops it in between)."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.svc: Services | None = None
        self.client = None

    def start(self) -> Api:
        settings = Settings(db=self.url)
        self.svc = Services.open(settings)
        self.svc.start()
        self.client = create_app(settings, self.svc).test_client()
        return self

    def stop(self) -> None:
        if self.svc is not None:
            self.svc.stop()
            self.svc = None

    def events(self, *evs) -> None:
        r = self.client.post("/api/v1/events", json={"events": list(evs)})
        assert r.status_code == 200 and r.get_json()["ok"] is True, r.get_json()

    def get(self, path: str):
        r = self.client.get(path)
        assert r.status_code == 200, (path, r.get_json())
        return r.get_json()

    def parts(self) -> int:
        with self.svc.store.engine.connect() as conn:
            return conn.execute(select(func.count()).select_from(part_t)).scalar()


@pytest.fixture
def api(db_url):
    a = Api(db_url).start()
    yield a
    a.stop()


def start(api: Api, env: str, client: str, **provenance) -> None:
    api.events({"op": "update", "env": env, "win": "loss", "kind": "line", "mode": "append",
                "traces": [{"x": [0.0, 1.0], "y": [2.0, 1.0]}]},
               {"op": "run_start", "env": env, "client": client, "t": 1000.0,
                "provenance": {"host": "box", "python": "3.11.7", **provenance}})


def make_runs(api: Api) -> list[str]:
    """Runs in every shape a provenance has: shared list with a diff, another list, no list, none at all."""
    start(api, "a", "c1", packages=TORCH_ENV, git={"commit": "abc", "diff": "+x", "dirty": True})
    start(api, "b", "c2", packages=TORCH_ENV, git={"commit": "abc"})
    start(api, "c", "c3", packages=OTHER_ENV)
    start(api, "d", "c4")  # a provenance without a package list
    start(api, "e", "c5", packages=None, git={"commit": "abc", "diff": None})
    api.events({"op": "update", "env": "f", "win": "loss", "kind": "line", "mode": "append",
                "traces": [{"x": [0.0], "y": [1.0]}]},
               {"op": "run_tags", "env": "f", "add": ["only-tags"]})  # a run record with no provenance
    api.events({"op": "fork_env", "env": "a-fork", "from": "a"})
    return ["a", "b", "c", "d", "e", "f", "a-fork"]


def answers(api: Api, envs: list[str]) -> dict:
    listing = {r["env"]: r for r in api.get("/api/v1/runs")["runs"]}
    return {env: (api.get(f"/api/v1/envs/{env}/run"), listing[env]) for env in envs}


def test_runs_of_one_environment_share_one_list_and_answer_it_whole(api):
    envs = make_runs(api)
    got = answers(api, envs)
    assert got["a"][0]["provenance"]["packages"] == TORCH_ENV and got["a"][0]["provenance"]["git"]["diff"] == "+x"
    assert got["a-fork"][0]["provenance"]["packages"] == TORCH_ENV
    assert got["b"][0]["provenance"]["packages"] == TORCH_ENV and got["c"][0]["provenance"]["packages"] == OTHER_ENV
    assert got["d"][0]["provenance"]["packages"] is None and got["e"][0]["provenance"]["packages"] is None
    assert got["f"][0]["provenance"] is None
    assert all("packages" not in listed["provenance"] for _, listed in got.values() if listed["provenance"])
    assert got["e"][0]["provenance"]["git"] == {"commit": "abc", "diff": None}
    assert api.parts() == 3  # a, b and a's fork share one list, a and its fork one diff; c's list
    with api.svc.store.engine.connect() as conn:
        details = conn.execute(select(run_t.c.details)).scalars().all()
    assert all(not (d or {}).get("packages") and not (d or {}).get("diff") for d in details)


def test_deletes_and_changed_lists_leave_no_list_behind(api):
    make_runs(api)
    api.events({"op": "delete_env", "env": "a"}, {"op": "delete_env", "env": "b"})
    assert api.parts() == 3  # the fork still refers to the shared list and a's diff
    assert api.get("/api/v1/envs/a-fork/run")["provenance"]["packages"] == TORCH_ENV
    start(api, "a-fork", "c9", packages=OTHER_ENV + ["scipy==1.14"])  # resumed elsewhere: no diff, another list
    assert api.parts() == 2 and api.get("/api/v1/envs/a-fork/run")["provenance"]["packages"][-1] == "scipy==1.14"
    api.events({"op": "delete_env", "env": "c"}, {"op": "delete_env", "env": "a-fork"})
    assert api.parts() == 0


def test_an_archive_exported_and_imported_keeps_the_package_list(api):
    make_runs(api)
    before = answers(api, ["a", "c"])
    tar = api.client.get("/api/v1/archive?envs=a,c")
    assert tar.status_code == 200
    api.events({"op": "delete_env", "env": "a"}, {"op": "delete_env", "env": "c"}, {"op": "delete_env", "env": "b"},
               {"op": "delete_env", "env": "a-fork"})
    assert api.parts() == 0
    r = api.client.post("/api/v1/archive", data=tar.data, content_type="application/x-tar")
    assert r.status_code == 200, r.get_json()
    after = answers(api, ["a", "c"])
    for env in ("a", "c"):
        assert after[env][0]["provenance"] == before[env][0]["provenance"]
    assert api.parts() == 3


def test_migration_moves_the_lists_of_a_database_at_the_previous_head(db_url):
    api = Api(db_url).start()
    envs = make_runs(api)
    before = answers(api, envs)
    api.stop()
    cfg = alembic_config(db_url)
    command.downgrade(cfg, "0010_chunk_digests")  # the lists back in every run row, as the previous head kept them
    engine = create_engine_for(db_url)
    try:
        with engine.connect() as conn:
            tables = inspect(conn).get_table_names()
            rows = dict(conn.execute(select(env_t.c.name, run_t.c.details)  # columns the previous head had
                                     .join(run_t, run_t.c.env_id == env_t.c.id)).all())
    finally:
        engine.dispose()
    assert "provenance_part" not in tables
    assert rows["a"] == {"packages": TORCH_ENV, "diff": "+x"} and rows["c"] == {"packages": OTHER_ENV}
    assert rows["d"] == {"packages": None} and rows["e"] == {"packages": None, "diff": None} and rows["f"] is None
    command.upgrade(cfg, "head")
    old = Api(db_url).start()
    try:
        assert answers(old, envs) == before
        assert old.parts() == 3
    finally:
        old.stop()
