"""The hooks' cheap paths give what the plain ones gave: direct line events, fused norms, bulk label counts, stall
detection from step counters."""

from __future__ import annotations

import math
import time

import numpy as np
import pytest
import torch
from torch.utils.data import DataLoader, TensorDataset

import paneboard
from paneboard.hooks._util import append_point
from paneboard.hooks.labels import LabelCounter, int_labels
from paneboard.hooks.model import _combined, _norms
from paneboard.hooks.stall import StallDetector


def offline_client(env: str = "cost") -> paneboard.Client:
    """A client whose server never answers: every event stays readable in transport.pending_events()."""
    return paneboard.Client(server="http://127.0.0.1", port=9, env=env, spool_dir=False, exit_timeout=0,
                            capture=False)  # no run record: only the events under test are pending


def events_without_time(client: paneboard.Client) -> list[dict]:
    return [{k: v for k, v in e.items() if k not in ("t", "s")} for e in client.transport.pending_events()]


@pytest.mark.parametrize("opts", [None, {"title": "t", "legend": ["a", "b", "c"], "markers": True},
                                  {"legend": ["only a"]}])
@pytest.mark.parametrize("row", [[0.25], [1.0, float("nan"), 3], [2, True]])
def test_line_appends_of_plain_numbers_send_what_the_numpy_path_sends(row, opts):
    """The hooks' appends (and users' Y=[[v1, v2]], X=[x]) take line()'s no-numpy path: same events as numpy input."""
    fast, general = offline_client(), offline_client()
    fast.line(Y=[row], X=[7], win="w", update="append", opts=opts)
    general.line(Y=np.array([row], dtype=np.float64), X=np.array([7.0]), win="w", update="append", opts=opts)
    got, want = events_without_time(fast), events_without_time(general)
    assert got == want and len(got[0]["traces"]) == len(row)
    if len(row) == 3:
        assert got[0]["traces"][1]["y"] == [None]  # NaN goes as null either way


@pytest.mark.parametrize("by_name", [False, True])
def test_append_point_names_every_trace(by_name):
    client = offline_client()
    append_point(client, "w", None, 7, [1.0, 2.0], ["a", "b"], "a title", "unit", by_name=by_name)
    events = events_without_time(client)
    traces = [t for e in events for t in e["traces"]]
    assert [(t["name"], t["x"], t["y"]) for t in traces] == [("a", [7.0], [1.0]), ("b", [7.0], [2.0])]
    assert len(events) == (2 if by_name else 1) and events[0]["opts"]["title"] == "a title"


@pytest.mark.parametrize("device", ["cpu", pytest.param("cuda", marks=pytest.mark.skipif(
    not torch.cuda.is_available(), reason="needs CUDA"))])
def test_fused_norms_match_per_tensor_norms_for_mixed_dtypes_sparse_and_nan(device):
    tensors = [torch.randn(3, 4), torch.randn(5, dtype=torch.float64), torch.randn(2, 2).half(),
               torch.randn(4, 4).to_sparse(), torch.randn(7).bfloat16()]
    want = [t.to_dense().double().norm().item() for t in tensors]
    tensors = [t.to(device) for t in tensors[:3]] + tensors[3:4] + [t.to(device) for t in tensors[4:]]
    assert _norms(torch, tensors) == pytest.approx(want, rel=1e-2)  # half and bfloat16 precision
    assert _combined([3.0, 4.0]) == 5.0
    bad = _norms(torch, [torch.tensor([1.0, float("nan")], device=device), torch.tensor([float("inf")])])
    assert math.isnan(bad[0]) and math.isinf(bad[1]) and not math.isfinite(_combined(bad))


def test_label_counts_of_tensors_zero_dim_targets_numpy_and_non_labels():
    ys = [torch.randint(0, 7, (32,)) for _ in range(300)]
    assert np.array_equal(int_labels(ys), torch.cat(ys).numpy())
    assert list(int_labels([torch.tensor(3), torch.tensor(5)])) == [3, 5]  # batch_size=None: 0-d targets
    assert list(int_labels([np.array([1, 2]), np.array([2])])) == [1, 2, 2]
    assert int_labels([torch.rand(4)]) is None  # regression targets
    assert int_labels([torch.randint(0, 2, (4, 3))]) is None  # multi-label / segmentation


def test_labels_counted_in_bulk_mid_epoch_still_match_the_sampler_exactly():
    """600 batches: counted at 16-batch marks and at the epoch's end (600 is no multiple of 16); still exact."""
    client = offline_client("bulk")
    ds = TensorDataset(torch.zeros(1200, 2), torch.randint(0, 5, (1200,)))
    loader = paneboard.watch_dataloader(DataLoader(ds, batch_size=2, shuffle=True), client, every=50, alerts=False)
    served = torch.cat([y for _, y in loader])
    bar = next(e for e in client.transport.pending_events() if e["win"] == "data_labels")["figure"]["data"][0]
    assert bar["x"] == ["0", "1", "2", "3", "4"]
    assert bar["y"] == [float(c) for c in torch.bincount(served, minlength=5).tolist()]
    assert sum(bar["y"]) == 1200


def test_stall_detector_learns_the_interval_from_counters_and_forgets_pauses():
    det = StallDetector()
    assert det.observe(0.0, {"data": 0}) is False and det.moved_at is None  # a baseline, no step yet
    for k in range(1, 7):  # 5 steps per 50 ms tick: 10 ms a step
        assert det.observe(0.05 * k, {"data": 5 * k}) is True
    assert det.threshold(5, 0.01) == pytest.approx(0.05) and det.threshold(5, 0.2) == 0.2
    assert det.observe(0.35, {"data": 30}) is False and det.moved_at == pytest.approx(0.30)
    det.rebase({"data": 30})  # an epoch's end: no silence counts until a source moves again
    assert det.moved_at is None and det.observe(10.0, {"data": 30}) is False
    assert det.observe(10.05, {"data": 31}) is True  # the first move after a pause gives no interval
    assert det.threshold(5, 0.01) == pytest.approx(0.05)
    slow = StallDetector()
    for k in range(8):  # one step every 4 ticks of 0.5 s: 2 s a step
        slow.observe(2.0 * k, {"loss": k})
    assert slow.threshold(10, 1.0) == pytest.approx(20.0) and slow.last_count == 7


def test_label_counter_counts_every_few_batches_and_at_the_end_exactly():
    counter = LabelCounter(hold=3)  # small: counted mid-epoch, tensors, 0-d and negative ones, numpy, lists
    batches = [torch.randint(0, 6, (32,)) for _ in range(10)] + [torch.tensor(4), torch.tensor(-1)]
    others = [np.array([5, 5]), [0, 1], np.array([2, 3])]
    for y in batches + others:
        counter.add(y)
    counter.count()
    every = torch.cat([b.reshape(-1) for b in batches]).tolist() + [5, 5, 0, 1, 2, 3]
    assert counter.counts == {v: every.count(v) for v in set(every)} and counter.active
    counter.reset()
    assert counter.counts == {} and counter.active
    counter.add(torch.randint(0, 2, (4, 3)))  # 2-D targets: held, then found to be no labels
    counter.count()
    assert counter.counts == {} and not counter.active


def test_a_restarted_system_monitor_samples_again_without_setting_up_twice():
    client = offline_client("restart")
    mon = paneboard.SystemMonitor(client, interval=0.05, gpu=False)
    for _ in range(2):
        before = mon.samples
        deadline = time.monotonic() + 10
        while mon.samples < before + 2 and time.monotonic() < deadline:
            time.sleep(0.02)
        mon.stop()
        assert mon.samples >= before + 2
        mon.start()
    mon.stop()
    notes = [e for e in client.transport.pending_events() if e["win"] == "sys_note"]
    assert len(notes) == 1 and "GPU monitoring off" in notes[0]["content"]


def test_watched_loader_counts_every_batch_form_the_same_on_its_inline_and_general_paths():
    # The first batch (a list) puts later lists of a tensor x on the inline path; the tuple, the dict and the
    # 0-d batch take the general one. Samples and labels must add up the same either way.
    client = offline_client("forms")
    batches = [[torch.rand(4, 1, 8, 8), torch.tensor([0, 1, 2, 3])],
               [torch.rand(4, 1, 8, 8), torch.tensor([1, 1, 1, 1])],
               (torch.rand(3, 1, 8, 8), torch.tensor([2, 2, 2])),
               {"image": torch.rand(2, 1, 8, 8), "label": torch.tensor([3, 3])},
               [torch.rand(4, 1, 8, 8), torch.tensor([0, 0, 0, 0]), "an extra field"],
               [torch.tensor(1.0), torch.tensor(1)]]  # 0-d: no batch dimension, no samples; its label counts
    assert sum(1 for _ in paneboard.watch_dataloader(batches, client, every=100)) == 6
    events = {e["win"]: e for e in client.transport.pending_events()}
    per_s = {w: events[w]["traces"][0]["y"][0] for w in ("data_samples_per_s", "data_batches_per_s")}
    assert per_s["data_samples_per_s"] / per_s["data_batches_per_s"] == pytest.approx(17 / 6)  # one window
    bar = events["data_labels"]["figure"]["data"][0]
    assert dict(zip(bar["x"], bar["y"], strict=True)) == {"0": 5, "1": 6, "2": 4, "3": 3}
    client.close_connection(timeout=0)
