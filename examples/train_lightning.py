"""A small Lightning regression run logged with PaneboardLogger and PaneboardHooks (< 1 min on CPU).

    dash-server &   then   python examples/train_lightning.py [--port 8097] [--env lightning-demo]
"""

from __future__ import annotations

import argparse

import lightning.pytorch as pl
import torch

from paneboard.integrations.lightning import PaneboardHooks, PaneboardLogger


class Regressor(pl.LightningModule):
    def __init__(self, lr: float = 0.02, width: int = 32) -> None:
        super().__init__()
        self.save_hyperparameters()
        self.net = torch.nn.Sequential(torch.nn.Linear(8, width), torch.nn.ReLU(), torch.nn.Linear(width, 1))

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = torch.nn.functional.mse_loss(self.net(x), y)
        self.log("train/loss", loss)
        return loss

    def validation_step(self, batch, batch_idx):
        x, y = batch
        self.log("val/loss", torch.nn.functional.mse_loss(self.net(x), y))

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=self.hparams.lr)


def data(n: int, seed: int) -> torch.utils.data.DataLoader:
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 8, generator=g)
    y = (x[:, :4].sum(1) - x[:, 4:].prod(1)).unsqueeze(1)
    return torch.utils.data.DataLoader(torch.utils.data.TensorDataset(x, y), batch_size=32, shuffle=seed == 0)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--server", default="http://localhost")
    p.add_argument("--port", type=int, default=8097)
    p.add_argument("--env", default="lightning-demo")
    args = p.parse_args()
    logger = PaneboardLogger(env=args.env, server=args.server, port=args.port)
    trainer = pl.Trainer(max_epochs=5, logger=logger, callbacks=[PaneboardHooks(every=20)], accelerator="cpu",
                         log_every_n_steps=5, enable_checkpointing=False)
    trainer.fit(Regressor(), data(2048, 0), data(512, 1))
    print(f"done: open {args.server}:{args.port}/env/{args.env}")


if __name__ == "__main__":
    main()
