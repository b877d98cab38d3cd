"""Schemathesis fuzzes the JSON API of a real server from its own OpenAPI description: never a 5xx."""

from __future__ import annotations

import json
import urllib.request

import pytest
import schemathesis
from hypothesis import HealthCheck, settings

import paneboard
from conftest import ServerProcess

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def fuzz_server(tmp_path_factory):
    srv = ServerProcess(db=tmp_path_factory.mktemp("fuzz") / "fuzz.db").start()
    # Some real data, so generated requests also hit existing envs and panes.
    client = paneboard.Client(server="http://127.0.0.1", port=srv.port, env="main", spool_dir=False)
    client.line(X=list(range(100)), Y=[float(i) for i in range(100)], win="w")
    client.text("<b>t</b>", win="t")
    client.transport.put({"op": "update", "mode": "append", "kind": "histogram", "env": "main", "win": "h",
                          "records": [{"step": s, "limits": [1.0, 2.0, 3.0], "counts": [0, s, 1]} for s in range(5)]})
    assert client.flush(timeout=30)
    client.close_connection(timeout=5)
    yield srv
    srv.stop()


@pytest.fixture(scope="module")
def api_schema(fuzz_server):
    return schemathesis.openapi.from_url(fuzz_server.url + "/api/v1/openapi.json")


schema = schemathesis.pytest.from_fixture("api_schema")


@schema.parametrize()
@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
def test_no_generated_request_gets_a_server_error(case, fuzz_server):
    response = case.call()
    assert response.status_code < 500, f"{case.method} {case.formatted_path} -> {response.status_code}: {response.text}"
    if response.status_code >= 400:
        assert "error" in response.json(), response.text  # every refusal explains itself in JSON


def test_server_is_healthy_after_the_fuzzing(fuzz_server):
    # The fuzzer may have deleted the seeded env (DELETE is in the API): check the server still works.
    assert fuzz_server.proc.poll() is None
    client = paneboard.Client(server="http://127.0.0.1", port=fuzz_server.port, env="after-fuzz", spool_dir=False)
    client.line(X=[0, 1, 2], Y=[3.0, 4.0, 5.0], win="w")
    assert client.flush(timeout=30)
    client.close_connection(timeout=5)
    with urllib.request.urlopen(fuzz_server.url + "/api/v1/envs/after-fuzz/panes/w/export?format=json",
                                timeout=30) as r:
        assert json.loads(r.read())["traces"][0]["y"] == [3.0, 4.0, 5.0]
