"""Hooks against a real dash-server: GPU-memory alert rule, iterable worker tails, ModelWatch.step(step), weak refs."""

from __future__ import annotations

import gc
import weakref

import pytest
import torch
from torch.utils.data import DataLoader, IterableDataset, get_worker_info

import paneboard


def client_for(server, env: str) -> paneboard.Client:
    return server.client(env)


def test_gpu_memory_near_its_limit_alerts_from_injected_readings(server):
    client = client_for(server, "gpumem")
    mon = paneboard.SystemMonitor(client, start=False, gpu=False)
    assert mon.check_gpu_memory({"gpu0": (7.0, 8.0), "cuda:1": (0.5, 16.0)}, step=3) == []  # 88%: fine
    assert paneboard.alerts.get(client).fired == {}
    assert mon.check_gpu_memory({"gpu0": (7.7, 8.0), "cuda:1": (0.5, 16.0)}, step=4) == ["gpu0"]
    paneboard.alerts.configure(client, gpu_mem_fraction=0.5)
    assert mon.check_gpu_memory({"gpu0": (1.0, 8.0), "cuda:1": (9.0, 16.0)}, step=5) == ["cuda:1"]
    assert mon.check_gpu_memory({"gpu0": (0.0, 0.0)}, step=6) == []  # no total reported: no alert
    assert client.flush(timeout=30)
    rows = server.get_json("/api/v1/envs/gpumem/panes/alerts")["data"]["html"]
    assert "step 4" in rows and "gpu_memory gpu0" in rows and "96% of its limit (7.70 / 8.00 GiB)" in rows
    assert "step 5" in rows and "gpu_memory cuda:1" in rows
    client.close_connection(timeout=5)


class Shards(IterableDataset):
    """`n` items split between workers; item `bad` is None (corrupt) and the collate_fn drops it."""

    def __init__(self, n: int, bad: int | None = None) -> None:
        self.n, self.bad = n, bad

    def __iter__(self):
        info = get_worker_info()
        wid, nw = (info.id, info.num_workers) if info else (0, 1)
        for i in range(wid, self.n, nw):
            yield None if i == self.bad else (torch.ones(2), i % 3)


def drop_none(items):
    return torch.utils.data.default_collate([it for it in items if it is not None])


@pytest.mark.parametrize("workers", [0, 2])
def test_iterable_worker_tails_are_not_skips_but_dropped_samples_are(server, workers):
    client = client_for(server, f"tails{workers}")
    # 55 items: one stream ends 10, 10, 8 and the other 10, 10, 7; the short tails (one per worker) are no skip
    clean = paneboard.watch_dataloader(DataLoader(Shards(55), batch_size=10, num_workers=workers), client,
                                       every=2, prefix="clean")
    assert sum(len(y) for _x, y in clean) == 55
    bad = paneboard.watch_dataloader(DataLoader(Shards(55, bad=2), batch_size=10, num_workers=workers,
                                                collate_fn=drop_none), client, every=2, prefix="bad")
    assert sum(len(y) for _x, y in bad) == 54
    assert client.flush(timeout=30)
    for prefix, want in (("clean", 0), ("bad", 1)):
        data = server.get_json(f"/api/v1/envs/tails{workers}/panes/{prefix}_skipped/export?format=json")
        assert sum(data["traces"][0]["y"]) == want, prefix
    client.close_connection(timeout=5)


def test_model_watch_step_takes_the_callers_step(server):
    client = client_for(server, "steps")
    model = torch.nn.Linear(3, 2)
    w = paneboard.watch(model, client, every=10)  # no optimizer: the loop calls w.step(step)
    for step in (100, 105, 110, 115, 120):
        model.zero_grad()
        model(torch.ones(1, 3)).sum().backward()
        w.step(step)
    w.step()  # no argument: counts on from the last step
    assert w.steps == 121
    assert client.flush(timeout=30)
    data = server.get_json("/api/v1/envs/steps/panes/model_grad_norm/export?format=json")
    assert data["traces"][0]["x"] == [100, 110, 120]
    client.close_connection(timeout=5)


def test_alert_state_does_not_keep_its_client_alive(server):
    client = client_for(server, "weak")
    alerts = paneboard.alerts.get(client)
    alerts.check_loss(1.0, 0)
    assert alerts.client is client
    client.close_connection(timeout=5)
    ref = weakref.ref(client)
    del client
    gc.collect()
    assert ref() is None and alerts.client is None
    alerts.alert("late", 1, "a rule firing after its client is gone is a no-op")  # must not raise
    alerts.stop()


def test_data_starved_alert_only_while_the_gpu_idles(server):
    client = client_for(server, "starved")
    alerts = paneboard.alerts.get(client)
    assert alerts.check_data_wait(0.8, 10) is True  # no GPU reading: the wait fraction decides
    alerts.note_gpu_util(93.0)  # e.g. the SystemMonitor's NVML mean over GPUs
    assert alerts.check_data_wait(0.8, 20) is False
    alerts.note_gpu_util(12.0)
    assert alerts.check_data_wait(0.8, 30) is True
    assert alerts.check_data_wait(0.3, 40) is False
    assert alerts.fired == {"data_starved": 2}
    client.close_connection(timeout=5)


def test_alert_rows_of_two_processes_share_the_pane(server):
    a, b = client_for(server, "shared"), client_for(server, "shared")  # e.g. two ranks, or a resumed run
    paneboard.alerts.check_loss(a, float("nan"), 5)
    assert a.flush(timeout=30)
    paneboard.alerts.check_loss(b, float("inf"), 9)
    assert b.flush(timeout=30)
    rows = server.get_json("/api/v1/envs/shared/panes/alerts")["data"]["html"]
    assert "step 5" in rows and "step 9" in rows  # the second process's first row did not replace the first's
    a.close_connection(timeout=5)
    b.close_connection(timeout=5)


EXIT_MID_EPOCH = """
import sys, torch
from torch.utils.data import DataLoader, TensorDataset
import paneboard
client = paneboard.Client(port=int(sys.argv[1]), env="exit_mid_epoch", spool_dir=False, exit_timeout=5)
loader = paneboard.watch_dataloader(DataLoader(TensorDataset(torch.rand(640, 3), torch.randint(0, 4, (640,))),
                                               batch_size=8), client, every=5)
it = iter(loader)
for _ in range(12):
    next(it)  # the loop stops mid-epoch: the generator stays suspended until the interpreter finalizes it
print("done", flush=True)
"""


@pytest.mark.parametrize("server_up", [True, False])
def test_a_script_leaving_a_watched_loader_mid_epoch_exits(server, server_up):
    """Regression: finalizing the suspended loader at shutdown logged its last window, which restarted the
    sender thread after the exit flush; Thread.start() blocks forever there, so the script never exited."""
    import subprocess
    import sys

    port = server.port if server_up else 9  # 9: nothing listens (discard)
    proc = subprocess.run([sys.executable, "-c", EXIT_MID_EPOCH, str(port)], capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 0 and "done" in proc.stdout, proc.stderr[-2000:]
    if server_up:
        wait = server.get_json("/api/v1/envs/exit_mid_epoch/panes/data_wait_fraction")["data"]["traces"][0]
        assert wait["x"][:2] == [5, 10]  # windows logged before the exit flush were delivered
