"""Seed groups: the t distribution against known values, grouping by config, bands on aligned steps, Welch's test,
and the /api/v1/groups endpoint on SQLite and PostgreSQL."""

from __future__ import annotations

import math

import numpy as np
import pytest

from paneboard.server.app import create_app
from paneboard.server.seeds import groups, stats
from paneboard.server.services import Services
from paneboard.server.settings import Settings

# Reference values from scipy.stats 1.17 (t.cdf, t.ppf, ttest_ind(equal_var=False)); scipy is not a runtime dependency.
T_CDF = [((2.0, 5), 0.9490302605850708), ((-1.3, 3.5), 0.1362977079021851), ((0.4, 1), 0.6211189415908434),
         ((10.0, 30), 0.9999999999771237), ((-3.0, 2), 0.04773298313335456), ((4.0, 1000), 0.9999659950403956)]
T_PPF = [((0.975, 1), 12.706204736174694), ((0.975, 4), 2.7764451051977934), ((0.975, 9), 2.262157162798205),
         ((0.995, 2.5), 7.163728138948783), ((0.975, 200), 1.9718962236339088)]


@pytest.mark.parametrize(("args", "expected"), T_CDF)
def test_t_cdf_matches_reference(args, expected):
    assert stats.t_cdf(*args) == pytest.approx(expected, rel=1e-12, abs=1e-14)


def test_t_cdf_closed_forms_and_symmetry():
    for t in (-7.5, -1.0, 0.0, 0.3, 2.2, 50.0):
        assert stats.t_cdf(t, 1) == pytest.approx(0.5 + math.atan(t) / math.pi, abs=1e-13)  # Cauchy
        assert stats.t_cdf(t, 2) == pytest.approx(0.5 + t / (2 * math.sqrt(2 + t * t)), abs=1e-13)
        assert stats.t_cdf(t, 7.3) + stats.t_cdf(-t, 7.3) == pytest.approx(1.0, abs=1e-13)
    assert stats.t_cdf(math.inf, 3) == 1.0 and stats.t_cdf(-math.inf, 3) == 0.0
    with pytest.raises(ValueError):
        stats.t_cdf(1.0, 0)


@pytest.mark.parametrize(("args", "expected"), T_PPF)
def test_t_ppf_matches_reference(args, expected):
    q, df = args
    assert stats.t_ppf(q, df) == pytest.approx(expected, rel=1e-10)
    assert stats.t_ppf(1 - q, df) == pytest.approx(-expected, rel=1e-10)


def test_betainc_known_values():
    assert stats.betainc(1, 1, 0.3) == pytest.approx(0.3)  # uniform
    assert stats.betainc(2, 3, 0.4) == pytest.approx(0.5248, abs=1e-12)  # 1 - sum of a binomial tail
    assert stats.betainc(0.5, 0.5, 0.5) == pytest.approx(0.5, abs=1e-12)


A = [0.81, 0.83, 0.80, 0.84, 0.82]
B = [0.78, 0.80, 0.79, 0.77, 0.81, 0.76]


def test_welch_and_ci_match_reference():
    a, b = stats.describe(A), stats.describe(B)
    assert a.ci == pytest.approx((0.8003675683852245, 0.8396324316147756), rel=1e-12)
    w = stats.welch(a, b)
    assert w.t == pytest.approx(3.362691229906835, rel=1e-10)
    assert w.df == pytest.approx(8.989361702127663, rel=1e-10)
    assert w.p == pytest.approx(0.00836738015279203, rel=1e-9)


def test_welch_refuses_small_or_spreadless_samples():
    one = stats.describe([0.9])
    assert one.ci is None and one.std is None
    w = stats.welch(one, stats.describe(B))
    assert w.p is None and "n too small" in w.note and w.diff == pytest.approx(0.9 - np.mean(B))
    flat = stats.welch(stats.describe([1.0, 1.0]), stats.describe([2.0, 2.0]))
    assert flat.p is None and "no spread" in flat.note


def test_grouping_ignores_seed_keys_and_labels_what_differs():
    configs = {"a1": {"lr": 0.1, "seed": 1, "opt": {"name": "sgd", "seed": 3}},
               "b1": {"lr": 0.01, "seed": 1, "opt": {"name": "sgd"}},
               "a2": {"lr": 0.1, "seed": 2, "opt": {"name": "sgd", "seed": 4}},
               "none": None}
    made = groups.make_groups(configs, ["seed"])
    assert [(g.envs, g.label) for g in made] == [(["a1", "a2"], "lr=0.1, opt.name=sgd"),
                                                (["b1"], "lr=0.01, opt.name=sgd"), (["none"], "(no config)")]
    assert [g.envs for g in groups.make_groups(configs, [])] == [["a1"], ["b1"], ["a2"], ["none"]]


def _run(x, y, downsampled=False):
    x, y = np.asarray(x, float), np.asarray(y, float)
    return groups.RunSeries(x, y, downsampled, float(y[-1]), float(y.min()), float(y.max()))


def test_align_keeps_steps_every_run_has():
    x, values = groups.align([_run([0, 1, 2, 3], [1, 2, 3, 4]), _run([1, 2, 3, 5], [5, 6, 7, 8]),
                              _run([0, 2, 3], [9, 9, 9])], 100)
    assert x.tolist() == [2, 3]
    assert values.tolist() == [[3, 4], [6, 7], [9, 9]]
    mean, lo, hi = groups.band(values, "minmax")
    assert mean.tolist() == pytest.approx([6, 20 / 3]) and lo.tolist() == [3, 4] and hi.tolist() == [9, 9]
    mean, lo, hi = groups.band(values, "ci")
    half = stats.t_ppf(0.975, 2) * values.std(axis=0, ddof=1) / math.sqrt(3)
    assert hi.tolist() == pytest.approx((mean + half).tolist())


def test_align_bins_downsampled_reads():
    xa = np.arange(0, 1000, 1.0)
    xb = np.arange(0.5, 1000, 1.0)  # never the same x as run a
    x, values = groups.align([_run(xa, xa * 2, True), _run(xb, xb * 2, True)], 10)
    assert len(x) == 10 and values.shape == (2, 10)
    assert np.allclose(values[0], values[1], atol=1.5)


# ------------------------------------------------------------------------------------------- API (both backends)


@pytest.fixture
def client(db_url):
    settings = Settings(db=db_url)
    svc = Services.open(settings)
    svc.start()
    yield create_app(settings, svc).test_client()
    svc.stop()


def _seed_runs(api, finals):
    """Two configs × len(finals[config]) seeds; each run's loss decays towards its final value."""
    events = []
    for lr, ends in finals.items():
        for seed, end in enumerate(ends):
            env = f"lr{lr}_s{seed}"
            events.append({"op": "set_meta", "env": env, "meta": {"lr": lr, "seed": seed, "epochs": 3}})
            steps = list(range(0, 50 + seed))  # a later seed logs a few more steps: not aligned with the others
            ys = [end + 1.0 / (s + 1) for s in steps]
            events.append({"op": "update", "env": env, "win": "loss", "kind": "line", "mode": "append",
                           "opts": {"title": "loss"},
                           "traces": [{"name": "loss", "x": steps, "y": ys}]})
    r = api.post("/api/v1/events", json={"events": events})
    assert r.status_code == 200 and r.get_json()["ok"], r.get_json()


def test_groups_endpoint_bands_and_tests(client):
    finals = {0.1: [0.30, 0.32, 0.31, 0.29, 0.33], 0.01: [0.40, 0.42, 0.41, 0.43, 0.39]}
    _seed_runs(client, finals)
    envs = [f"lr{lr}_s{s}" for lr in finals for s in range(5)]
    r = client.get(f"/api/v1/groups?envs={','.join(envs)}&band=ci&value=final")
    assert r.status_code == 200, r.get_json()
    res = r.get_json()
    assert [(g["label"], g["n"]) for g in res["groups"]] == [("lr=0.1", 5), ("lr=0.01", 5)]
    (loss,) = res["series"]
    g0 = loss["groups"][0]
    assert g0["aligned"] == 5 and g0["steps"] == 50 and g0["x"] == list(range(50))
    expected0 = np.mean(finals[0.1]) + 1.0  # at step 0 each run is final + 1
    assert g0["mean"][0] == pytest.approx(expected0)
    assert g0["lo"][0] < g0["mean"][0] < g0["hi"][0]
    (test,) = res["tests"]
    assert test["direction"] == "min"
    means = {g["group"]: g["mean"] for g in test["groups"]}
    # Final values are the last point of each run (its step 49 + seed).
    want = [np.mean([e + 1.0 / (50 + s) for s, e in enumerate(finals[lr])]) for lr in finals]
    assert [means["g0"], means["g1"]] == pytest.approx(want)
    (pair,) = test["pairs"]
    ref = stats.welch(stats.describe([e + 1.0 / (50 + s) for s, e in enumerate(finals[0.1])]),
                      stats.describe([e + 1.0 / (50 + s) for s, e in enumerate(finals[0.01])]))
    assert pair["p"] == pytest.approx(ref.p) and pair["p"] < 0.001

    best = client.get(f"/api/v1/groups?envs={','.join(envs)}&value=best&ignore=").get_json()
    assert len(best["groups"]) == 10  # nothing ignored: every seed is its own group
    assert all(p["p"] is None and "n too small" in p["note"] for p in best["tests"][0]["pairs"])


@pytest.mark.parametrize("query", ["", "envs=", "envs=nope", "envs=a&band=wide", "envs=a&value=median",
                                   "envs=a&points=0", "envs=a&ignore=" + ",".join(["k"] * 40)])
def test_groups_endpoint_rejects_bad_input(client, query):
    client.post("/api/v1/events", json={"events": [{"op": "set_meta", "env": "a", "meta": {"seed": 1}}]})
    r = client.get(f"/api/v1/groups?{query}")
    assert r.status_code in (400, 404) and "error" in r.get_json()


def _config_runs(api):
    """Runs of lr × optimizer × 3 seeds; the loss's floor depends on the optimizer only."""
    events = []
    for lr in (0.1, 0.01):
        for opt, floor in (("adam", 0.2), ("sgd", 0.6)):
            for seed in range(3):
                env = f"{opt}_lr{lr}_s{seed}"
                events.append({"op": "set_meta", "env": env,
                               "meta": {"lr": lr, "optim": {"name": opt}, "seed": seed}})
                ys = [floor + seed * 0.01 + 1.0 / (s + 1) for s in range(20)]
                events.append({"op": "set", "env": env, "win": "loss", "kind": "line", "opts": {"title": "loss"},
                               "traces": [{"name": None, "x": list(range(20)), "y": ys}]})
    r = api.post("/api/v1/events", json={"events": events})
    assert r.status_code == 200 and r.get_json()["ok"], r.get_json()
    return [e["env"] for e in events if e["op"] == "set_meta"]


def test_groups_by_a_chosen_key_with_a_median(client):
    envs = _config_runs(client)
    res = client.get(f"/api/v1/groups?envs={','.join(envs)}&by=optim.name&center=median&band=minmax").get_json()
    assert res["keys"] == ["lr", "optim.name", "seed"]  # what the picker offers: the keys that vary
    assert [(g["label"], g["n"]) for g in res["groups"]] == [("optim.name=adam", 6), ("optim.name=sgd", 6)]
    (loss,) = res["series"]
    adam = loss["groups"][0]
    # Six runs at step 0: 1 + 0.2 + seed * 0.01 for seeds 0, 0, 1, 1, 2, 2: the median is 1.21, min 1.2, max 1.22.
    assert adam["mean"][0] == pytest.approx(1.21) and adam["lo"][0] == pytest.approx(1.2)
    assert adam["hi"][0] == pytest.approx(1.22)
    two = client.get(f"/api/v1/groups?envs={','.join(envs)}&by=lr,optim.name").get_json()
    assert sorted(g["n"] for g in two["groups"]) == [3, 3, 3, 3]
    offer = client.get(f"/api/v1/groups?envs={','.join(envs)}&series=0").get_json()
    assert len(offer["groups"]) == 4 and offer["series"] == [] and offer["tests"] == []


@pytest.mark.parametrize("query", ["envs=a&by=,", "envs=a&center=mode", "envs=a&by=" + ",".join(["k"] * 40)])
def test_groups_by_rejects_bad_keys(client, query):
    client.post("/api/v1/events", json={"events": [{"op": "set_meta", "env": "a", "meta": {"seed": 1}}]})
    r = client.get(f"/api/v1/groups?{query}")
    assert r.status_code == 400 and "error" in r.get_json()


def test_reduce_band_keeps_the_envelope_on_whole_steps():
    x = np.arange(1000, dtype=float)
    mid = np.sin(x / 50)
    lo, hi = mid - 0.1, mid + 0.1
    lo[437] = -5.0  # one seed's spike: the band must still reach it
    nx, (m, nlo, nhi) = groups.reduce_band(x, (mid, lo, hi), 10)
    assert 5 <= len(nx) <= 10 and np.all(nx == np.floor(nx)) and np.all(np.diff(nx) > 0)
    assert nlo.min() == -5.0 and nhi.max() == hi.max()
    assert np.all(nlo <= m) and np.all(m <= nhi)
    same = groups.reduce_band(x[:20], (mid[:20], lo[:20], hi[:20]), 10)  # fits: returned as is
    assert same[0] is not None and len(same[0]) == 20 and same[1][1] is lo[:20].base or len(same[1][1]) == 20


def test_groups_reads_whole_series_then_fits_the_band_to_the_budget(client):
    envs = _config_runs(client)
    q = f"/api/v1/groups?envs={','.join(envs)}&by=optim.name&band=minmax&points=10"
    res = client.get(q).get_json()
    (loss,) = res["series"]
    sgd = loss["groups"][1]
    assert sgd["steps"] == 20 and sgd["downsampled"] and len(sgd["x"]) <= 5
    # Exact min/max over every seed and step, kept through the reduction: step 0 of seed 2 is 0.6 + 0.02 + 1.
    assert max(sgd["hi"]) == pytest.approx(1.62) and all(isinstance(v, int) for v in sgd["x"])
    one = client.get(q + "&title=loss").get_json()
    assert [s["title"] for s in one["series"]] == ["loss"] and len(one["tests"]) == 1
    none = client.get(q + "&title=acc").get_json()
    assert none["series"] == [] and none["tests"] == [] and len(none["groups"]) == 2
