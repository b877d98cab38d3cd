"""Lightning's Trainer logging through PaneboardLogger into a real server; hparams, resume, hooks, experiment."""

from __future__ import annotations

import os
from typing import Any

import pytest


@pytest.fixture(scope="module")
def lt() -> Any:
    """helpers.lightning_models, imported here rather than at collection."""
    pytest.importorskip("lightning.pytorch")
    from helpers import lightning_models

    return lightning_models


def test_every_step_and_the_hparams_arrive(lt: Any, server: Any):
    logger = lt.PaneboardLogger(env="pl-run", server="http://127.0.0.1", port=server.port)
    lt.fit(logger)
    assert logger.writer.flush(timeout=30)
    assert list(server.series("pl-run", "train_loss")) == ["train_loss"]  # one trace: no hparams session point
    loss = server.series("pl-run", "train_loss")["train_loss"]
    assert [x for x, _ in loss] == list(range(16))  # 2 epochs x 8 steps
    epochs = server.series("pl-run", "epoch")["epoch"]
    assert {y for _, y in epochs} == {0.0, 1.0}
    sessions = server.get_json("/api/v1/hparams?envs=pl-run")["sessions"]
    (session,) = sessions
    assert session["hparams"]["lr"] == 0.05 and session["hparams"]["width"] == 8
    assert session["metrics"]["train_loss"] == pytest.approx(loss[-1][1])


def test_resuming_with_the_same_version_appends_to_the_same_env(lt: Any, server: Any):
    for _ in range(2):
        lt.fit(lt.PaneboardLogger(name="resume", version=3, server="http://127.0.0.1", port=server.port), epochs=1)
    loss = server.series("resume/3", "train_loss")["train_loss"]
    assert len(loss) == 16


def test_experiment_takes_client_calls_and_hooks_write_model_and_system_panes(lt: Any, server: Any):
    logger = lt.PaneboardLogger(env="pl-hooks", server="http://127.0.0.1", port=server.port)
    assert logger.experiment is logger.writer and logger.experiment.client is logger.writer.client
    logger.experiment.text("from the module", win="note")
    import paneboard

    watched = paneboard.watch_dataloader(lt.loader(), logger.experiment, every=2)  # Lightning takes any iterable
    lt.fit(logger, epochs=1, callbacks=[lt.PaneboardHooks(every=2, monitor_interval=0.2)], data=watched)
    assert logger.writer.flush(timeout=30)
    wins = {p["win"] for p in server.get_json("/api/v1/envs/pl-hooks")["panes"]}
    assert {"note", "train_loss"} <= wins
    assert any("norm" in w for w in wins), wins  # watch(model): weight / gradient norms
    assert any(w.startswith("sys_") for w in wins), wins  # the system monitor
    assert any(w.startswith("data_") for w in wins), wins  # the watched loader's data-wait and throughput
    logger.experiment.close("note")  # a pane's name: Client.close (delete the pane), not SummaryWriter.close
    assert logger.writer.flush(timeout=30)
    assert "note" not in {p["win"] for p in server.get_json("/api/v1/envs/pl-hooks")["panes"]}


def test_lightning_cli_takes_the_logger_by_class_path(lt: Any, server: Any, tmp_path: Any):
    from lightning.pytorch.cli import LightningCLI

    LightningCLI(lt.CliTiny, args=["fit", "--trainer.max_epochs=1", "--trainer.limit_train_batches=4",
                                   "--trainer.log_every_n_steps=1", "--trainer.enable_checkpointing=false",
                                   "--trainer.enable_progress_bar=false", "--trainer.accelerator=cpu",
                                   "--trainer.logger=paneboard.integrations.lightning.PaneboardLogger",
                                   "--trainer.logger.env=cli-run", "--trainer.logger.server=http://127.0.0.1",
                                   f"--trainer.logger.port={server.port}", f"--trainer.logger.save_dir={tmp_path}"],
                 save_config_kwargs={"overwrite": True})
    assert len(server.series("cli-run", "train_loss")["train_loss"]) == 4
    assert list(tmp_path.rglob("config.yaml")), "LightningCLI saves its config under the logger's log_dir"


def test_experiment_is_a_summary_writer_like_tensorboard_loggers(lt: Any, server: Any):
    import paneboard
    from helpers.tensorboard import records

    logger = lt.PaneboardLogger(env="pl-gan", server="http://127.0.0.1", port=server.port)
    assert isinstance(logger.experiment, paneboard.SummaryWriter)
    trainer = lt.pl.Trainer(max_epochs=2, limit_train_batches=4, logger=logger, enable_checkpointing=False,
                            enable_progress_bar=False, enable_model_summary=False, accelerator="cpu")
    trainer.fit(lt.Gan(), lt.loader())
    assert logger.experiment.flush(30)
    images = records(server, "pl-gan", "generated_images")
    assert [(r["step"], r["type"], r["width"], r["height"]) for r in images] == [(0, "image", 4, 8), (1, "image", 4, 8)]
    assert [r["step"] for r in records(server, "pl-gan", "first_layer")] == [0, 1]


def test_a_fit_that_raises_ends_the_run_failed_with_its_traceback(lt: Any, server: Any):
    logger = lt.PaneboardLogger(env="pl-fail", server="http://127.0.0.1", port=server.port)
    with pytest.raises(RuntimeError, match="boom"):
        lt.pl.Trainer(max_epochs=1, limit_train_batches=4, logger=logger, log_every_n_steps=1,
                      enable_checkpointing=False, enable_progress_bar=False, enable_model_summary=False,
                      accelerator="cpu").fit(lt.Failing(), lt.loader())
    assert logger.writer.flush(30)
    run = server.get_json("/api/v1/envs/pl-fail/run")
    assert run["status"] == "failed", run
    assert "RuntimeError: boom at batch 2" in run["error"] and "training_step" in run["error"]


@pytest.mark.parametrize("log_model", [True, "all"])
def test_log_model_uploads_the_checkpoints_as_artifacts(lt: Any, server: Any, tmp_path: Any, log_model: Any):
    from lightning.pytorch.callbacks import ModelCheckpoint

    logger = lt.PaneboardLogger(env="pl-ckpt", server="http://127.0.0.1", port=server.port, log_model=log_model)
    checkpoint = ModelCheckpoint(dirpath=tmp_path / "ckpt", monitor="train_loss", save_top_k=1, save_last=True,
                                 every_n_train_steps=4)
    trainer = lt.pl.Trainer(max_epochs=2, limit_train_batches=8, logger=logger, log_every_n_steps=1,
                            enable_progress_bar=False, enable_model_summary=False, accelerator="cpu",
                            callbacks=[checkpoint])
    trainer.fit(lt.Tiny(), lt.loader())
    refs = [ref.wait(30) for ref in logger.artifacts]
    assert None not in refs and logger.writer.flush(timeout=30)
    versions = server.get_json("/api/v1/artifacts/model-pl-ckpt/versions")["versions"]
    # "all": every save as it happened (4 saves: top-1 and last each time); True: what is kept at the end
    assert len(versions) == (len(logger.artifacts) if log_model == "all" else 2) and len(versions) >= 2
    assert all(v["env"] == "pl-ckpt" and v["type"] == "model" for v in versions)
    best = server.get_json("/api/v1/artifact?ref=model-pl-ckpt:best")
    assert best["metadata"]["original_filename"] == os.path.basename(checkpoint.best_model_path)
    assert best["metadata"]["monitor"] == "train_loss" and best["metadata"]["score"] == \
        pytest.approx(float(checkpoint.best_model_score))
    client = logger.writer.client
    path = client.use_artifact("model-pl-ckpt:best", root=tmp_path / "cache")
    assert open(path, "rb").read() == open(checkpoint.best_model_path, "rb").read()
    assert lt.torch.load(path, weights_only=False)["global_step"] == best["step"]
    assert client.close_connection(10)
