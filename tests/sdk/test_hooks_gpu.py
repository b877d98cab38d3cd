"""SystemMonitor and alerts on a real NVIDIA GPU: NVML and CUDA allocator panes against direct readings.

Skipped where there is no GPU, nvidia-ml-py or CUDA torch (CI); the NVML-absent path is tested in test_hooks.py.
"""

from __future__ import annotations

import time

import pytest
import torch
from torch.utils.data import DataLoader, Dataset

import paneboard

_GB = 1024 ** 3


def _nvml():
    try:
        import pynvml

        pynvml.nvmlInit()
        if pynvml.nvmlDeviceGetCount() < 1 or not torch.cuda.is_available():
            return None
        return pynvml
    except Exception:  # noqa: BLE001 - ImportError, NVMLError_LibraryNotFound, DriverNotLoaded, ...
        return None


nv = _nvml()
needs_gpu = pytest.mark.skipif(nv is None, reason="needs an NVIDIA GPU with nvidia-ml-py and CUDA torch")


def _busy_gpu(seconds: float) -> None:
    """Keep the GPU busy for about `seconds` with matrix products (synchronized every few)."""
    a = torch.randn(4096, 4096, device="cuda")
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        for _ in range(8):
            a = torch.tanh(a @ a)
        torch.cuda.synchronize()


@needs_gpu
def test_gpu_panes_match_nvml_and_the_cuda_allocator(server):
    client = server.client("gpu")
    ballast = torch.empty(int(1.5 * _GB), dtype=torch.uint8, device="cuda:0")  # 1.5 GiB this process holds
    mon = client.monitor_system(interval=0.25)
    deadline = time.monotonic() + 60
    while mon.samples < 8 and time.monotonic() < deadline:
        _busy_gpu(0.25)
    allocated, reserved = torch.cuda.memory_allocated(0) / _GB, torch.cuda.memory_reserved(0) / _GB
    mon.stop()
    assert client.flush(timeout=30)
    assert mon.gpu_note is None
    h = nv.nvmlDeviceGetHandleByIndex(0)
    panes = {p["win"] for p in server.get_json("/api/v1/envs/gpu")["panes"]}
    assert "sys_note" not in panes  # a GPU with NVML: no "no GPU" note
    util = server.series("gpu", "sys_gpu_util")["gpu0"]
    assert len(util) >= 8 and all(0 <= y <= 100 for _, y in util)
    assert max(y for _, y in util[2:]) >= 50  # the matrix products kept it busy
    total = server.series("gpu", "sys_gpu_mem_total")["gpu0"]
    assert total[-1][1] == pytest.approx(nv.nvmlDeviceGetMemoryInfo(h).total / _GB)
    used = server.series("gpu", "sys_gpu_mem_used")["gpu0"]
    assert all(1.5 <= y <= total[-1][1] for _, y in used[1:])  # the ballast is in it
    mine = server.series("gpu", "sys_gpu_proc_mem")["gpu0"]
    assert 1.5 <= mine[-1][1] <= used[-1][1]  # this process's memory, found by pid
    power, limit = server.series("gpu", "sys_gpu_power")["gpu0"], server.series("gpu", "sys_gpu_power_limit")["gpu0"]
    assert all(0 < p <= 1.2 * lim for (_, p), (_, lim) in zip(power, limit, strict=True))
    assert all(5 <= y <= 110 for _, y in server.series("gpu", "sys_gpu_temp")["gpu0"])
    assert all(y > 0 for _, y in server.series("gpu", "sys_gpu_sm_clock")["gpu0"])
    alloc = server.series("gpu", "sys_cuda_alloc")
    assert alloc["cuda:0 allocated"][-1][1] == pytest.approx(allocated, rel=0.05)
    assert alloc["cuda:0 reserved"][-1][1] == pytest.approx(reserved, rel=0.05)
    assert alloc["cuda:0 max allocated"][-1][1] >= 1.5
    assert not any(k.startswith("gpu_memory") for k in paneboard.alerts.get(client).fired)  # far from the limit
    del ballast
    client.close_connection(timeout=5)


class SlowItems(Dataset):
    """Each item sleeps: a loop over it waits for data most of the time."""

    def __len__(self) -> int:
        return 10_000

    def __getitem__(self, i: int):
        time.sleep(0.01)
        return torch.zeros(8), i % 2


@needs_gpu
def test_data_starved_alert_fires_while_the_gpu_idles_and_not_while_it_is_busy(server):
    client = server.client("gpu_starved")
    alerts = paneboard.alerts.get(client)
    mon = client.monitor_system(interval=0.2)
    while mon.samples < 2:  # a GPU reading exists before the first window ends
        time.sleep(0.05)
    loader = paneboard.watch_dataloader(DataLoader(SlowItems(), batch_size=4), client, every=5)
    w = torch.randn(8, 2, device="cuda")
    for step, (x, _y) in enumerate(loader):  # 40 ms of loading for ~nothing on the GPU: starved, GPU idle
        (x.cuda() @ w).sum().item()
        if step == 60:
            break
    assert alerts.fired.get("data_starved", 0) >= 5
    assert client.flush(timeout=30)
    rows = server.get_json("/api/v1/envs/gpu_starved/panes/alerts")["data"]["html"]
    assert "data_starved" in rows and "GPU utilization" in rows
    fired = alerts.fired["data_starved"]
    # The same 40 ms waits while ~50 ms of queued matrix products per step keep the GPU saturated: the input
    # pipeline is not what holds the GPU back, so no alert (launches are asynchronous: the loop still waits).
    a = torch.randn(4096, 4096, device="cuda")
    for step, _batch in enumerate(loader):
        for _ in range(20):
            a = torch.tanh(a @ a)
        if step == 60:
            break
    torch.cuda.synchronize()
    assert mon.samples >= 10
    assert alerts.fired["data_starved"] - fired <= 2  # at most the windows that straddle the switch
    mon.stop()
    client.close_connection(timeout=5)
