"""Training hooks against a real dash-server: DataLoader profiler, system monitor, model watch, alerts."""

from __future__ import annotations

import logging
import sys
import time

import pytest
import torch
from torch.utils.data import DataLoader, Dataset, IterableDataset, WeightedRandomSampler

import paneboard


def client_for(server, env: str) -> paneboard.Client:
    return server.client(env)


def series(server, env: str, win: str) -> dict[str, list[tuple[float, float]]]:
    return server.series(env, win)


class SleepyDataset(Dataset):
    """Each item sleeps `delay` s; the time really spent loading is summed (the truth the profiler must match)."""

    def __init__(self, n: int, delay: float, n_classes: int = 4) -> None:
        self.n, self.delay, self.n_classes = n, delay, n_classes
        self.load_time = 0.0

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, i: int):
        t0 = time.perf_counter()
        time.sleep(self.delay)
        item = torch.full((1, 8, 8), float(i)), i % self.n_classes
        self.load_time += time.perf_counter() - t0
        return item


def test_data_wait_fraction_and_samples_per_second_match_the_truth(server):
    client = client_for(server, "dl")
    ds = SleepyDataset(n=320, delay=0.002)
    loader = paneboard.watch_dataloader(DataLoader(ds, batch_size=8), client, every=10)
    assert len(loader) == 40 and loader.batch_size == 8  # still looks like the DataLoader
    compute = 0.0
    t_start = time.perf_counter()
    for x, _y in loader:
        t0 = time.perf_counter()
        time.sleep(0.012)  # the "training step"
        x.sum()
        compute += time.perf_counter() - t0
    elapsed = time.perf_counter() - t_start
    assert client.flush(timeout=30)
    wait = series(server, "dl", "data_wait_fraction")["data wait"]
    sps = series(server, "dl", "data_samples_per_s")["samples/s"]
    assert [x for x, _ in wait] == [10, 20, 30, 40]
    # Each point is its window's own rate (samples or batches over the window's time), so the windows' lengths
    # follow from the points; a window slowed by a busy machine counts by its length, as it did in the loop.
    bps = series(server, "dl", "data_batches_per_s")["batches/s"]
    windows = [10 / y for _, y in bps]
    assert [80 / y for _, y in sps] == pytest.approx(windows)
    # The truth is what the loop saw: every moment outside its body was spent waiting for the next batch (sampler,
    # __getitem__, collate). Loading alone (ds.load_time) is a lower bound: on a loaded CI box collate adds a lot.
    assert abs(sum(windows) - elapsed) / elapsed < 0.10, (windows, elapsed)
    true_frac = (elapsed - compute) / elapsed
    rep_frac = sum(y * d for (_, y), d in zip(wait, windows, strict=True)) / sum(windows)
    assert abs(rep_frac - true_frac) / true_frac < 0.10, (rep_frac, true_frac, ds.load_time / elapsed)
    assert rep_frac > 0.95 * ds.load_time / elapsed
    settings = server.get_json("/api/v1/envs/dl/panes/data_loader")["data"]["html"]
    for needle in ("num_workers", "pin_memory", "prefetch_factor", "SequentialSampler", "SleepyDataset (320)"):
        assert needle in settings
    grid = server.get_json("/api/v1/envs/dl/panes/data_first_batch")
    assert grid["kind"] == "image" and grid["data"]["width"] > 8 * 8  # 8 images side by side
    client.close_connection(timeout=5)


@pytest.mark.parametrize("workers", [0, 2])
def test_label_histogram_is_exactly_what_the_weighted_sampler_served(server, workers):
    client = client_for(server, f"labels{workers}")
    labels = torch.tensor([0] * 90 + [1] * 9 + [2] * 1)  # imbalanced 90/9/1
    ds = torch.utils.data.TensorDataset(torch.rand(100, 3, 8, 8), labels)
    weights = 1.0 / torch.bincount(labels).double()[labels]
    sampler = WeightedRandomSampler(weights, num_samples=300, generator=torch.Generator().manual_seed(7))
    twin = WeightedRandomSampler(weights, num_samples=300, generator=torch.Generator().manual_seed(7))
    expected = torch.bincount(labels[list(twin)], minlength=3).tolist()
    loader = paneboard.watch_dataloader(DataLoader(ds, batch_size=32, sampler=sampler, num_workers=workers),
                                        client, every=4)
    served = torch.zeros(3, dtype=torch.long)
    for _x, y in loader:
        served += torch.bincount(y, minlength=3)
    assert served.tolist() == expected
    assert client.flush(timeout=30)
    fig = server.get_json(f"/api/v1/envs/labels{workers}/panes/data_labels")["data"]
    (bar,) = fig["data"]
    assert bar["x"] == ["0", "1", "2"] and bar["y"] == expected
    assert "WeightedRandomSampler" in server.get_json(f"/api/v1/envs/labels{workers}/panes/data_loader")["data"][
        "html"]
    client.close_connection(timeout=5)


class MaybeBroken(Dataset):
    """Every 7th item is 'corrupt' (None) and the user's collate_fn skips it."""

    def __len__(self) -> int:
        return 70

    def __getitem__(self, i: int):
        return None if i % 7 == 3 else (torch.zeros(2), i % 2)


def skip_none_collate(items):
    return torch.utils.data.default_collate([it for it in items if it is not None])


class Stream(IterableDataset):
    def __iter__(self):
        for i in range(50):
            yield torch.ones(3), i % 5


def test_skipped_samples_and_iterable_datasets(server):
    client = client_for(server, "skip")
    loader = paneboard.watch_dataloader(DataLoader(MaybeBroken(), batch_size=10, collate_fn=skip_none_collate),
                                        client, every=3)
    assert sum(len(y) for _x, y in loader) == 60
    it_loader = paneboard.watch_dataloader(DataLoader(Stream(), batch_size=10), client, every=2, prefix="stream")
    assert sum(len(y) for _x, y in it_loader) == 50
    assert client.flush(timeout=30)
    skipped = series(server, "skip", "data_skipped")["skipped samples"]
    assert sum(y for _, y in skipped) == 10
    assert "10 samples dropped" in server.get_json("/api/v1/envs/skip/panes/data_skipped_log")["data"]["html"]
    hist = server.get_json("/api/v1/envs/skip/panes/stream_labels")["data"]["data"][0]
    assert hist["y"] == [10, 10, 10, 10, 10]
    assert "iterable" in server.get_json("/api/v1/envs/skip/panes/stream_loader")["data"]["html"]
    client.close_connection(timeout=5)


def test_system_monitor_without_nvml_notes_it_and_still_logs_cpu_and_memory(server, monkeypatch):
    import psutil

    # nvidia-ml-py absent (a None entry makes `import pynvml` raise ImportError), as on CI and most laptops;
    # on a GPU machine with it installed this still takes the absent path
    monkeypatch.setitem(sys.modules, "pynvml", None)
    client = client_for(server, "sys")
    mon = client.monitor_system(interval=0.1)
    ballast = bytearray(200 * 1024 * 1024)  # +200 MiB RSS that the memory pane must show
    ballast[:: 4096] = b"x" * len(ballast[:: 4096])
    deadline = time.monotonic() + 20
    while mon.samples < 8 and time.monotonic() < deadline:
        time.sleep(0.05)
    rss = psutil.Process().memory_info().rss / 1024 ** 3
    mon.stop()
    assert not mon._thread.is_alive()  # stop() joins
    assert client.flush(timeout=30)
    note = server.get_json("/api/v1/envs/sys/panes/sys_note")["data"]["html"]
    assert note == mon.gpu_note and note.startswith("no GPU panes: nvidia-ml-py is not installed")
    cpu = series(server, "sys", "sys_cpu")
    assert set(cpu) == {"system CPU %", "this process CPU %"} and len(cpu["system CPU %"]) >= 8
    # Bounded by the core count, with slack: over 0.1 s windows the kernel's 10 ms CPU-time ticks alone can
    # push a busy process's reading past 100% per core.
    assert all(0 <= y <= 150 * psutil.cpu_count() for _, y in cpu["this process CPU %"])
    mem = series(server, "sys", "sys_memory")
    last_rss = mem["process RSS"][-1][1]
    assert abs(last_rss - rss) / rss < 0.10 and last_rss > 0.2  # the ballast is in it
    assert mem["system total"][-1][1] == pytest.approx(psutil.virtual_memory().total / 1024 ** 3)
    assert len(series(server, "sys", "sys_net")["recv MB/s"]) >= 7  # rates start at the second sample
    panes = {p["win"] for p in server.get_json("/api/v1/envs/sys")["panes"]}
    assert not any(w.startswith("sys_gpu") for w in panes)
    del ballast
    client.close_connection(timeout=5)


def small_model() -> torch.nn.Module:
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Conv2d(1, 4, 3), torch.nn.ReLU(), torch.nn.Flatten(),
                               torch.nn.Linear(4 * 6 * 6, 3))


def test_watch_logs_layer_norms_lr_and_summary_and_unwatch_stops(server):
    client = client_for(server, "model")
    model = small_model()
    opt = torch.optim.SGD([{"params": model[0].parameters(), "lr": 0.1},
                           {"params": model[3].parameters(), "lr": 0.01}])
    x, y = torch.randn(16, 1, 8, 8), torch.randint(0, 3, (16,))
    handle = paneboard.watch(model, client, optimizer=opt, every=5, sample=x[:2])
    expected = {}
    for step in range(1, 21):
        opt.zero_grad()
        torch.nn.functional.cross_entropy(model(x), y).backward()
        if step % 5 == 0:
            expected[step] = (model[3].weight.norm().item() ** 2 + model[3].bias.norm().item() ** 2) ** 0.5
        opt.step()
    handle.unwatch()
    for _ in range(10):  # after unwatch nothing more is logged
        opt.step()
    assert client.flush(timeout=30)
    grad = series(server, "model", "model_grad_norm")
    assert set(grad) == {"0", "3"}
    assert [x for x, _ in grad["3"]] == [1, 5, 10, 15, 20]
    weight = dict(series(server, "model", "model_weight_norm")["3"])
    for step, norm in expected.items():
        assert weight[step] == pytest.approx(norm, rel=1e-5)
    assert [v for _, v in series(server, "model", "model_lr")["group 1"]] == [0.01] * 5
    total = series(server, "model", "model_grad_norm_total")["total"]
    assert all(v > 0 and v < 1e3 for _, v in total)
    summary = server.get_json("/api/v1/envs/model/panes/model_summary")["data"]["html"]
    assert "2×4×6×6" in summary and "2×3" in summary and "Conv2d" in summary and "total params: 475" in summary
    client.close_connection(timeout=5)


def alert_rows(server, env: str) -> str:
    return server.get_json(f"/api/v1/envs/{env}/panes/alerts")["data"]["html"]


def test_alerts_fire_on_nan_loss_divergence_and_nan_gradients(server, caplog):
    caplog.set_level(logging.WARNING, logger="paneboard")
    client = client_for(server, "nan")
    for step in range(20):
        assert paneboard.alerts.check_loss(client, torch.tensor(1.0 + 0.01 * step), step) is False
    assert paneboard.alerts.check_loss(client, 50.0, 20) is True  # > 10x the running median
    assert paneboard.alerts.check_loss(client, float("nan"), 21) is True
    assert paneboard.alerts.check_loss(client, float("inf"), 22) is True  # same kind: no second warning
    model = small_model()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    paneboard.watch(model, client, optimizer=opt, every=1)
    model(torch.randn(2, 1, 8, 8)).sum().backward()
    model[0].weight.grad[0, 0, 0, 0] = float("nan")
    opt.step()
    assert client.flush(timeout=30)
    rows = alert_rows(server, "nan")
    assert "loss_divergence" in rows and "step 20" in rows
    assert "loss_nonfinite" in rows and "step 21" in rows
    assert "grad_nonfinite" in rows
    assert paneboard.alerts.get(client).fired["loss_nonfinite"] == 2
    nan_warnings = [r for r in caplog.records if "loss_nonfinite" in r.getMessage()]
    assert len(nan_warnings) == 1
    client.close_connection(timeout=5)


def test_stall_alert_fires_when_steps_stop(server):
    client = client_for(server, "stall")
    alerts = paneboard.alerts.configure(client, min_stall_s=0.2, stall_factor=5)
    for step in range(30):
        alerts.check_loss(1.0, step)
        time.sleep(0.01)
    time.sleep(1.0)  # the injected stall
    alerts.check_loss(1.0, 30)
    assert client.flush(timeout=30)
    rows = alert_rows(server, "stall")
    assert rows.count("stall") == 1 and "step 29" in rows
    alerts.stop()
    client.close_connection(timeout=5)


def test_a_healthy_run_raises_no_alert(server):
    client = client_for(server, "healthy")
    # A step held up longer than 10 s would be a stall; a busy machine delays steps far less than that.
    alerts = paneboard.alerts.configure(client, min_stall_s=10, stall_factor=5)
    ds = torch.utils.data.TensorDataset(torch.rand(64, 1, 8, 8), torch.randint(0, 3, (64,)))
    loader = paneboard.watch_dataloader(DataLoader(ds, batch_size=4), client, every=4)
    model = small_model()
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    paneboard.watch(model, client, optimizer=opt, every=4)
    for epoch in range(2):
        for step, (x, y) in enumerate(loader):
            opt.zero_grad()
            loss = torch.nn.functional.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
            paneboard.alerts.check_loss(client, loss, epoch * 16 + step)
            time.sleep(0.01)
    assert client.flush(timeout=30)
    assert alerts.fired == {}
    panes = {p["win"] for p in server.get_json("/api/v1/envs/healthy")["panes"]}
    assert "alerts" not in panes and "data_wait_fraction" in panes and "model_grad_norm" in panes
    alerts.stop()
    client.close_connection(timeout=5)
