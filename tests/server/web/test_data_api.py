"""paneboard.Api against a real in-process server: runs table, exact and sampled history, export, runs.parquet."""

from __future__ import annotations

import io
import math
import urllib.error
import urllib.request

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest

import paneboard


def _log(server, env: str, n: int = 300, **kw):
    client = paneboard.Client(server="http://127.0.0.1", port=server.port, env=env, spool_dir=False, capture=False,
                              **kw)
    x = np.arange(n, dtype=float)
    loss = 1.0 / (x + 1.0)
    loss[7] = math.nan  # exact means NaN, -0.0 and extremes too (the SDK sends ±inf as NaN)
    loss[8] = 1e308
    loss[9] = -0.0
    client.line(Y=loss, X=x, win="loss")
    client.line(Y=x[::2] * 0.5, X=x[::2], win="acc")
    assert client.flush(30)
    client.close_connection(5)
    return x, loss


def test_runs_and_exact_history(server):
    x, loss = _log(server, "proj/a", config={"lr": 0.01, "opt": {"name": "adam"}}, tags=["base"])
    _log(server, "proj/b", config={"lr": 0.1})
    api = paneboard.Api(server=server.url)
    runs = api.runs("lr < 0.05")
    assert isinstance(runs, pd.DataFrame)
    assert runs["env"].tolist() == ["proj/a"]
    row = runs.iloc[0]
    assert row["config.lr"] == 0.01 and row["config.opt.name"] == "adam" and list(row["tags"]) == ["base"]
    assert row["loss.count"] == 299 and row["acc.last"] == 149.0  # the summary counts finite values
    assert set(api.runs()["env"]) == {"proj/a", "proj/b"}
    assert api.runs(columns=["config.lr"]).columns.tolist() == ["env", "config.lr"]

    h = api.history("proj/a")
    assert h.columns.tolist()[:2] == ["step", "wall"] and set(h.columns) == {"step", "wall", "loss", "acc"}
    np.testing.assert_array_equal(h["step"].to_numpy(), x)
    got = h["loss"].to_numpy()
    assert got.dtype == np.float64
    np.testing.assert_array_equal(got, loss)  # NaN == NaN here
    assert math.copysign(1, got[9]) == -1
    assert h["acc"].notna().sum() == 150 and h["wall"].notna().all()
    only = api.history(runs.iloc[0], keys="acc")
    assert only.columns.tolist() == ["step", "wall", "acc"] and len(only) == 150


def test_sampled_history_and_errors(server):
    api = paneboard.Api(server=server.url)
    client = paneboard.Client(server="http://127.0.0.1", port=server.port, env="big", spool_dir=False, capture=False)
    client.line(Y=np.sin(np.arange(50_000) / 100), X=np.arange(50_000.0), win="y")
    assert client.flush(30)
    client.close_connection(5)
    assert len(api.history("big")) == 50_000
    assert 0 < len(api.history("big", samples=500)) <= 1200
    with pytest.raises(paneboard.api.ApiError, match="no such run"):
        api.history("nope")
    with pytest.raises(paneboard.api.ApiError, match="400"):
        api.runs("lr <")


def test_export_and_runs_parquet(server, tmp_path):
    x, loss = _log(server, "e/a", config={"lr": 0.5})
    _log(server, "e/b", config={"lr": "auto"})  # a column mixing numbers and text becomes text
    api = paneboard.Api(server=server.url)
    assert api.export(tmp_path / "pq", 'name ~ "e/"') == {"runs": 2, "points": 900}
    hist = pq.read_table(tmp_path / "pq" / "history.parquet").to_pandas()
    a = hist[(hist.env == "e/a") & (hist.key == "loss")]
    np.testing.assert_array_equal(a["value"].to_numpy(), loss)
    np.testing.assert_array_equal(a["step"].to_numpy(), x)
    table = pq.read_table(tmp_path / "pq" / "runs.parquet").to_pandas()
    assert sorted(table["config.lr"]) == ["0.5", "auto"]
    assert api.export(tmp_path / "csv", 'name ~ "e/a"', format="csv")["points"] == 450
    csv = pd.read_csv(tmp_path / "csv" / "history.csv")
    np.testing.assert_array_equal(csv[csv.key == "loss"]["value"].to_numpy(), loss)
    with urllib.request.urlopen(server.url + "/api/v1/runs.parquet?q=" + "lr%20%3E%200.1") as r:
        via_http = pq.read_table(io.BytesIO(r.read())).to_pandas()
    assert via_http["env"].tolist() == ["e/a"]
    with pytest.raises(urllib.error.HTTPError) as err:
        urllib.request.urlopen(server.url + "/api/v1/history?samples=1")
    assert err.value.code == 400


def test_lists_of_dicts_without_pandas(server, monkeypatch):
    x, loss = _log(server, "plain")
    monkeypatch.setattr(paneboard.api, "_pandas", lambda: None)
    api = paneboard.Api(server=server.url)
    runs = api.runs()
    assert isinstance(runs, list) and runs[0]["env"] == "plain"
    rows = api.history("plain", keys=["loss"])
    assert [r["step"] for r in rows] == x.tolist() and rows[1]["loss"] == loss[1]


def test_token(make_server):
    srv = make_server(token="s3cret")
    with pytest.raises(paneboard.api.ApiError, match="401"):
        paneboard.Api(server=srv.url).runs()
    assert len(paneboard.Api(server=srv.url, token="s3cret").runs()) == 0
