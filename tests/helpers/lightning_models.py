"""The tiny LightningModules the Lightning integration tests fit; imported by a fixture, so that collecting the
suite does not import Lightning (4.6 s per worker, most of it compiling on a fresh clone)."""

from __future__ import annotations

from typing import Any

import lightning.pytorch as pl
import torch

from paneboard.integrations.lightning import PaneboardHooks, PaneboardLogger

# What the tests take from here (the fixture hands them this module).
__all__ = ["CliTiny", "Failing", "Gan", "PaneboardHooks", "PaneboardLogger", "Tiny", "fit", "loader", "pl", "torch"]


class Tiny(pl.LightningModule):
    def __init__(self, lr: float = 0.05, width: int = 8) -> None:
        super().__init__()
        self.save_hyperparameters()
        self.net = torch.nn.Sequential(torch.nn.Linear(4, width), torch.nn.ReLU(), torch.nn.Linear(width, 1))

    def training_step(self, batch: Any, batch_idx: int) -> Any:
        x, y = batch
        loss = torch.nn.functional.mse_loss(self.net(x), y)
        self.log("train_loss", loss)
        return loss

    def configure_optimizers(self) -> Any:
        return torch.optim.SGD(self.parameters(), lr=self.hparams.lr)


def loader() -> Any:
    g = torch.Generator().manual_seed(0)
    x = torch.randn(64, 4, generator=g)
    data = torch.utils.data.TensorDataset(x, x.sum(1, keepdim=True))
    return torch.utils.data.DataLoader(data, batch_size=8)


def fit(logger: PaneboardLogger, epochs: int = 2, callbacks: list | None = None, data: Any = None) -> Any:
    trainer = pl.Trainer(max_epochs=epochs, limit_train_batches=8, logger=logger, log_every_n_steps=1,
                         enable_checkpointing=False, enable_progress_bar=False, enable_model_summary=False,
                         accelerator="cpu", callbacks=callbacks or [])
    trainer.fit(Tiny(), data if data is not None else loader())
    return trainer


class CliTiny(Tiny):
    def train_dataloader(self) -> Any:
        return loader()


class Gan(Tiny):
    """Logs as Lightning's GAN example does at each epoch's end: `logger.experiment.add_image(...)`, and the other
    SummaryWriter calls TensorBoardLogger users make there."""

    def on_train_epoch_end(self) -> None:
        samples = torch.sigmoid(self.net[0].weight.detach()).reshape(1, 8, 4)
        for logger in self.loggers:
            logger.experiment.add_image("generated_images", samples, self.current_epoch)
            logger.experiment.add_histogram("first_layer", self.net[0].weight, self.current_epoch)


class Failing(Tiny):
    def training_step(self, batch: Any, batch_idx: int) -> Any:
        if batch_idx == 2:
            raise RuntimeError("boom at batch 2")
        return super().training_step(batch, batch_idx)
