"""One rank of a 2-process gloo DDP job using every hook; run by tests/sdk/test_hooks_ddp.py (RANK etc. in env)."""

from __future__ import annotations

import sys
import time

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

import paneboard


def main(port: int, env: str, rank_opt: str) -> None:
    dist.init_process_group("gloo")  # env://: MASTER_ADDR, MASTER_PORT, RANK, WORLD_SIZE
    client = paneboard.Client(server="http://127.0.0.1", port=port, env=env, spool_dir=False)
    torch.manual_seed(0)  # same init on both ranks (DDP also broadcasts rank 0's weights)
    model = DistributedDataParallel(torch.nn.Sequential(torch.nn.Conv2d(1, 4, 3), torch.nn.ReLU(),
                                                        torch.nn.Flatten(), torch.nn.Linear(4 * 6 * 6, 4)))
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    ds = TensorDataset(torch.rand(64, 1, 8, 8), torch.arange(64) % 4)
    loader = paneboard.watch_dataloader(DataLoader(ds, batch_size=8, sampler=DistributedSampler(ds, shuffle=False)),
                                        client, every=2)
    mon = paneboard.SystemMonitor(client, interval=0.05)
    watch = paneboard.watch(model, client, optimizer=opt, every=2, rank=rank_opt if rank_opt == "all" else 0)
    torch.manual_seed(dist.get_rank())  # different data noise per rank: only the all-reduce makes grads equal
    for x, y in loader:
        opt.zero_grad()
        torch.nn.functional.cross_entropy(model(x + 0.1 * torch.randn_like(x)), y).backward()
        opt.step()
    deadline = time.monotonic() + 20
    while mon.samples < 3 and time.monotonic() < deadline:
        time.sleep(0.05)
    mon.stop()
    watch.unwatch()
    ok = client.flush(timeout=30)
    client.close_connection(timeout=5)
    dist.barrier()
    dist.destroy_process_group()
    sys.exit(0 if ok and mon.samples >= 3 else 3)


if __name__ == "__main__":
    main(int(sys.argv[1]), sys.argv[2], sys.argv[3])
