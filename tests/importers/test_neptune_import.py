"""`dash-server import` of a Neptune exporter Parquet folder, on a fixture written in the exporter's schema."""

from __future__ import annotations

import datetime as dt
import json
import math
import urllib.request
from decimal import Decimal

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import paneboard
from paneboard.server.cli.main import main as dash_server

# neptune-ai/neptune-exporter's published Parquet schema (storage of its export command), one row per value
SCHEMA = pa.schema([
    ("project_id", pa.string()), ("run_id", pa.string()), ("attribute_path", pa.string()),
    ("attribute_type", pa.string()), ("step", pa.decimal128(18, 6)), ("timestamp", pa.timestamp("ms", tz="UTC")),
    ("int_value", pa.int64()), ("float_value", pa.float64()), ("string_value", pa.string()),
    ("bool_value", pa.bool_()), ("datetime_value", pa.timestamp("ms", tz="UTC")),
    ("string_set_value", pa.list_(pa.string())), ("file_value", pa.struct([("path", pa.string())])),
    ("histogram_value", pa.struct([("type", pa.string()), ("edges", pa.list_(pa.float64())),
                                   ("values", pa.list_(pa.float64()))])),
])
T0 = dt.datetime(2025, 6, 1, 12, 0, tzinfo=dt.timezone.utc)


def _row(run: str, path: str, kind: str, **values) -> dict:
    return {"project_id": "org/proj", "run_id": run, "attribute_path": path, "attribute_type": kind, **values}


def _write_run(folder, run: str, n: int, failed: bool) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(len(run))
    loss = rng.standard_normal(n)
    loss[2] = math.nan
    steps = [Decimal(i) / Decimal(2) for i in range(n)]  # Neptune steps are decimals
    rows = [
        _row(run, "sys/name", "string", string_value="exp-" + run),
        _row(run, "sys/tags", "string_set", string_set_value=["baseline", "big model"]),
        _row(run, "sys/description", "string", string_value="a *note*"),
        _row(run, "sys/creation_time", "datetime", datetime_value=T0),
        _row(run, "sys/modification_time", "datetime", datetime_value=T0 + dt.timedelta(hours=1)),
        _row(run, "sys/failed", "bool", bool_value=failed),
        _row(run, "sys/owner", "string", string_value="ada"),
        _row(run, "parameters/lr", "float", float_value=0.003),
        _row(run, "parameters/layers", "int", int_value=12),
        _row(run, "parameters/optimizer", "string", string_value="adam"),
        _row(run, "parameters/flag", "bool", bool_value=True),
        _row(run, "logs/text", "string_series", step=Decimal(0), timestamp=T0, string_value="hello"),
    ]
    rows += [_row(run, "train/loss", "float_series", step=steps[i], timestamp=T0 + dt.timedelta(seconds=i),
                  float_value=float(loss[i])) for i in range(n)]
    table = pa.Table.from_pylist(rows, schema=SCHEMA)
    (folder / "org_proj").mkdir(parents=True, exist_ok=True)
    half = len(rows) // 2  # two parts, as the exporter splits a big run
    pq.write_table(table.slice(0, half), folder / "org_proj" / f"{run}_part_0.parquet")
    pq.write_table(table.slice(half), folder / "org_proj" / f"{run}_part_1.parquet")
    return {"step": np.arange(n) / 2, "loss": loss, "wall": T0.timestamp() + np.arange(n, dtype=float)}


@pytest.mark.e2e
def test_neptune_export(tmp_path, make_server, capsys):
    data = tmp_path / "exports" / "data"
    truth = {run: _write_run(data, run, n, failed) for run, n, failed in (("RUN-1", 500, False), ("RUN-2", 40, True))}
    db = tmp_path / "imported.db"
    assert dash_server(["import", str(data), "--db", str(db)]) == 0
    assert "imported 540 points of 2 neptune runs" in capsys.readouterr().out
    assert dash_server(["import", str(data), "--db", str(db)]) == 0
    assert "imported 0 points" in capsys.readouterr().out
    api = paneboard.Api(server=make_server("imported").url)
    table = api.runs().set_index("env")
    assert sorted(table.index) == ["org/proj/exp-RUN-1", "org/proj/exp-RUN-2"]
    one = table.loc["org/proj/exp-RUN-1"]
    assert one["status"] == "finished" and table.loc["org/proj/exp-RUN-2"]["status"] == "failed"
    assert one["config.parameters/lr"] == 0.003 and one["config.parameters/layers"] == 12
    assert one["config.parameters/optimizer"] == "adam" and one["config.parameters/flag"] == True  # noqa: E712
    assert list(one["tags"]) == ["baseline", "big_model"]
    assert one["started"] == T0.timestamp() and one["ended"] == T0.timestamp() + 3600
    with urllib.request.urlopen(api.server + "/api/v1/envs/org%2Fproj%2Fexp-RUN-1/run") as r:
        record = json.loads(r.read())
    assert record["notes"] == "a *note*" and record["provenance"]["user"] == "ada"
    for run, want in truth.items():
        h = api.history(f"org/proj/exp-{run}")
        np.testing.assert_array_equal(h["step"].to_numpy(), want["step"])
        np.testing.assert_array_equal(h["train/loss"].to_numpy(), want["loss"])
        np.testing.assert_array_equal(h["wall"].to_numpy(), want["wall"])


def test_not_a_neptune_export(tmp_path, capsys):
    (tmp_path / "p").mkdir()
    pq.write_table(pa.table({"run_id": ["x"]}), tmp_path / "p" / "x_part_0.parquet")
    assert dash_server(["import", str(tmp_path), "--db", str(tmp_path / "x.db"), "--quiet"]) == 2
    assert "Neptune exporter Parquet folder" in capsys.readouterr().err  # named among what it looked for
