"""`dash-server runs delete`: by query, dry run first, on the database file and through a running server."""

from __future__ import annotations

import json
import subprocess
import sys
import time
import urllib.request

import pytest

from paneboard.server.services import Services
from paneboard.server.settings import Settings

pytestmark = pytest.mark.e2e  # every test runs `python -m paneboard.server` itself


def cli(*args, env=None):
    return subprocess.run([sys.executable, "-m", "paneboard.server", "runs", "delete", *args], capture_output=True,
                          text=True, timeout=120, env=env)


def seed_events(n_old=2):
    evs = []
    for env in [f"old{i}" for i in range(n_old)] + ["keep"]:
        evs += [{"op": "run_start", "env": env, "client": env, "t": time.time()},
                {"op": "update", "env": env, "win": "loss", "kind": "line", "mode": "append", "name": None,
                 "traces": [{"x": [0.0], "y": [1.0]}]},
                {"op": "run_end", "env": env, "client": env}]
    return evs


def test_delete_by_query_on_the_database_file(tmp_path):
    db = str(tmp_path / "r.db")
    svc = Services.open(Settings(db=db))
    svc.writer.start()
    from paneboard.server.dispatch.parse import parse_event

    assert svc.writer.submit_wait([parse_event(e) for e in seed_events()]).errors == []
    svc.writer.stop()
    svc.stop()
    dry = cli("--db", db, "--query", 'name ~ "^old"', "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert dry.stdout.splitlines()[0] == "would delete 2 run(s)"
    assert cli("--db", db, "--query", 'name ~ "^old"', "--older-than", "1").stdout.startswith("deleted 0 run(s)")
    bad = cli("--db", db, "--query", "lr <")
    assert bad.returncode == 2 and "position 4" in bad.stderr
    holder = subprocess.Popen([sys.executable, "-c", "import sys, time; from paneboard.server.store.instance_lock "
                               "import lock_database; lock_database(sys.argv[1]); print('locked', flush=True); "
                               "time.sleep(60)", f"sqlite:///{db}"], stdout=subprocess.PIPE, text=True)
    try:  # a dash-server holding the file: the command refuses and points at --server
        assert holder.stdout.readline().strip() == "locked"
        refused = cli("--db", db, "--query", 'name ~ "^old"')
        assert refused.returncode == 2 and "--server" in refused.stderr
    finally:
        holder.kill()
        holder.wait()
    done = cli("--db", db, "--query", 'name ~ "^old"')
    assert done.returncode == 0 and done.stdout.startswith("deleted 2 run(s)")
    svc = Services.open(Settings(db=db))
    assert [e.name for e in svc.store.list_envs()] == ["keep"]
    svc.stop()


def test_delete_through_a_running_server(server):
    req = urllib.request.Request(server.url + "/api/v1/events", data=json.dumps({"events": seed_events()}).encode(),
                                 method="POST", headers={"Content-Type": "application/json"})
    assert json.loads(urllib.request.urlopen(req).read())["ok"]
    done = cli("--server", server.url, "--query", 'status:finished and name ~ "^old"')
    assert done.returncode == 0, done.stderr
    assert sorted(done.stdout.split()[3:]) == ["old0", "old1"]
    assert [r["env"] for r in server.get_json("/api/v1/runs")["runs"]] == ["keep"]
