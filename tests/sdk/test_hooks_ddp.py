"""DDP: a real 2-process gloo job logs every hook into one env; rank detection from torch.distributed or env vars."""

from __future__ import annotations

import os
import socket
import subprocess
import sys

import pytest
import torch

import paneboard
from helpers.paths import TESTS
from paneboard.hooks.dist import rank_info

WORKER = TESTS / "ddp_worker.py"
HOST = socket.gethostname()


def run_job(server, env: str, rank_opt: str) -> None:
    """Two ranks of tests/ddp_worker.py, rendezvous over MASTER_ADDR/PORT; both must exit 0."""
    with socket.socket() as s:  # a free port for the ranks' rendezvous
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    procs = []
    for rank in (0, 1):
        penv = {**os.environ, "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(port), "RANK": str(rank),
                "LOCAL_RANK": str(rank), "WORLD_SIZE": "2", "OMP_NUM_THREADS": "1"}
        procs.append(subprocess.Popen([sys.executable, str(WORKER), str(server.port), env, rank_opt], env=penv,
                                      stdout=subprocess.PIPE, stderr=subprocess.STDOUT))
    outs = [p.communicate(timeout=180)[0].decode(errors="replace") for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outs


def traces(server, env: str, win: str) -> dict[str, list[tuple[float, float]]]:
    data = server.get_json(f"/api/v1/envs/{env}/panes/{win}/export?format=json")
    return {t["name"]: list(zip(t["x"], t["y"], strict=True)) for t in data["traces"]}


def lab(rank: int, name: str) -> str:
    return f"{HOST}/rank{rank} {name}"


def check_per_rank_stats(server, env: str) -> None:
    panes = {p["win"] for p in server.get_json(f"/api/v1/envs/{env}")["panes"]}
    for r in (0, 1):  # DataLoader stats of every rank: labelled traces, per-rank panes
        assert {f"data_loader_r{r}", f"data_labels_r{r}"} <= panes
    wait = traces(server, env, "data_wait_fraction")
    assert set(wait) == {lab(0, "data wait"), lab(1, "data wait")}
    assert [x for x, _ in wait[lab(1, "data wait")]] == [2, 4]  # 32 samples per rank / 8 = 4 batches
    # DistributedSampler(shuffle=False) serves rank r the indices r, r+2, ...: labels {0, 2} vs {1, 3}
    for r, classes in ((0, ["0", "2"]), (1, ["1", "3"])):
        (bar,) = server.get_json(f"/api/v1/envs/{env}/panes/data_labels_r{r}")["data"]["data"]
        assert bar["x"] == classes and bar["y"] == [16, 16]
    cpu = traces(server, env, "sys_cpu")  # system stats of every rank, labelled by host and rank
    assert set(cpu) == {lab(r, n) for r in (0, 1) for n in ("system CPU %", "this process CPU %")}
    assert all(len(v) >= 3 for v in cpu.values())
    if "sys_note_r0" in panes:  # no NVML here: each rank notes it in its own pane
        for r in (0, 1):
            assert server.get_json(f"/api/v1/envs/{env}/panes/sys_note_r{r}")["data"]["html"].startswith(
                f"{HOST}/rank{r}: no GPU")
    else:
        assert lab(1, "gpu0") in traces(server, env, "sys_gpu_util")


@pytest.mark.long
def test_ddp_job_scalars_from_rank0_and_system_and_data_stats_from_every_rank(server):
    run_job(server, "ddp", "0")
    grad = traces(server, "ddp", "model_grad_norm")
    assert set(grad) == {"module.0", "module.3"}  # rank 0 only, unlabelled: one trace per layer
    assert [x for x, _ in grad["module.3"]] == [1, 2, 4]
    assert "model_summary" in {p["win"] for p in server.get_json("/api/v1/envs/ddp")["panes"]}
    check_per_rank_stats(server, "ddp")


@pytest.mark.long
def test_ddp_job_rank_all_keeps_every_rank_labelled(server):
    run_job(server, "ddpall", "all")
    grad = traces(server, "ddpall", "model_grad_norm")
    assert set(grad) == {lab(r, n) for r in (0, 1) for n in ("module.0", "module.3")}
    # after DDP's all-reduce both ranks hold the same gradients, though each saw different data
    for layer in ("module.0", "module.3"):
        a, b = grad[lab(0, layer)], grad[lab(1, layer)]
        assert [x for x, _ in a] == [x for x, _ in b] == [1, 2, 4]
        assert [y for _, y in a] == pytest.approx([y for _, y in b], rel=1e-5)
    assert set(traces(server, "ddpall", "model_lr")) == {lab(0, "group 0"), lab(1, "group 0")}
    check_per_rank_stats(server, "ddpall")


def test_rank_from_env_vars_without_a_process_group(server, monkeypatch):
    assert not torch.distributed.is_initialized()
    monkeypatch.setenv("RANK", "1")
    monkeypatch.setenv("WORLD_SIZE", "2")
    info = rank_info()
    assert (info.rank, info.world_size, info.distributed, info.label) == (1, 2, True, f"{HOST}/rank1")
    client = paneboard.Client(server="http://127.0.0.1", port=server.port, env="envrank", spool_dir=False)
    model = torch.nn.Linear(3, 2)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    quiet = paneboard.watch(model, client, optimizer=opt, every=1, prefix="r0only")  # rank 0's job, not ours
    loud = paneboard.watch(model, client, optimizer=opt, every=1, prefix="every", rank="all")
    model(torch.ones(4, 3)).sum().backward()
    opt.step()
    assert not quiet.active and loud.active
    assert client.flush(timeout=30)
    panes = {p["win"] for p in server.get_json("/api/v1/envs/envrank")["panes"]}
    assert not any(w.startswith("r0only") for w in panes)
    assert set(traces(server, "envrank", "every_grad_norm")) == {lab(1, "Linear")}
    monkeypatch.delenv("RANK")
    monkeypatch.delenv("WORLD_SIZE")
    assert not rank_info().distributed
    client.close_connection(timeout=5)
