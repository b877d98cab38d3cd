"""Small CNN on a synthetic, imbalanced image dataset with every paneboard training hook (< 1 min on CPU).

    dash-server &   then   python examples/train_classifier.py [--port 8097] [--env classifier]
"""

from __future__ import annotations

import argparse

import torch
from torch.utils.data import DataLoader, Dataset, WeightedRandomSampler

import paneboard


class Shapes(Dataset):
    """Synthetic 1×28×28 images: class k is a bright square at a class-specific position, plus noise."""

    def __init__(self, n: int = 3000, n_classes: int = 5, seed: int = 0) -> None:
        g = torch.Generator().manual_seed(seed)
        # imbalanced on purpose: the WeightedRandomSampler's balancing shows in the labels pane
        self.labels = torch.multinomial(torch.tensor([0.5, 0.25, 0.15, 0.07, 0.03]), n, True, generator=g)
        self.noise = torch.rand(n, 1, 28, 28, generator=g) * 0.3

    def __len__(self) -> int:
        return len(self.labels)

    def __getitem__(self, i: int):
        y = int(self.labels[i])
        x = self.noise[i].clone()
        x[:, 4 * y:4 * y + 8, 4 * y:4 * y + 8] += 0.7
        return (x - 0.5) / 0.25, y  # normalized, as a torchvision transform would


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--server", default="http://localhost")
    ap.add_argument("--port", type=int, default=8097)
    ap.add_argument("--env", default="classifier")
    ap.add_argument("--epochs", type=int, default=3)
    args = ap.parse_args()
    device = "cuda" if torch.cuda.is_available() else "cpu"
    client = paneboard.Client(server=args.server, port=args.port, env=args.env)
    monitor = client.monitor_system(interval=1.0)

    ds = Shapes()
    weights = 1.0 / torch.bincount(ds.labels).double()[ds.labels]
    sampler = WeightedRandomSampler(weights, num_samples=len(ds), generator=torch.Generator().manual_seed(1))
    loader = paneboard.watch_dataloader(DataLoader(ds, batch_size=64, sampler=sampler, num_workers=2,
                                                   pin_memory=device == "cuda"), client, every=10)
    model = torch.nn.Sequential(
        torch.nn.Conv2d(1, 16, 3, padding=1), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
        torch.nn.Conv2d(16, 32, 3, padding=1), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
        torch.nn.Flatten(), torch.nn.Linear(32 * 7 * 7, 5)).to(device)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=50, gamma=0.5)
    sample = torch.stack([ds[i][0] for i in range(2)]).to(device)  # fixed inputs for the feature-map panes
    watch = paneboard.watch(model, client, optimizer=opt, every=10, sample=sample, feature_maps=["0", "3"])

    step = 0
    for epoch in range(args.epochs):
        correct = seen = 0
        for x, y in loader:
            x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
            opt.zero_grad()
            out = model(x)
            loss = torch.nn.functional.cross_entropy(out, y)
            loss.backward()
            opt.step()
            sched.step()
            step += 1
            correct += int((out.argmax(1) == y).sum())
            seen += len(y)
            if step % 10 == 0:  # one .item() every 10 steps, not every step
                value = loss.item()
                paneboard.alerts.check_loss(client, value, step)
                client.line(X=[step], Y=[value], win="loss", update="append", opts={"title": "train loss"})
        client.line(X=[epoch + 1], Y=[correct / seen], win="accuracy", update="append",
                    opts={"title": "train accuracy", "xlabel": "epoch"})
        print(f"epoch {epoch + 1}: accuracy {correct / seen:.3f}")
    watch.unwatch()
    monitor.stop()
    client.flush(timeout=30)
    client.close_connection()


if __name__ == "__main__":
    main()
