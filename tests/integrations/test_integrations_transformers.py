"""The Hugging Face Trainer logging through PaneboardCallback, and through its own TensorBoardCallback given a
paneboard.SummaryWriter; a tiny BERT built locally (no hub download)."""

from __future__ import annotations

import os
from typing import Any

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

import paneboard  # noqa: E402
from paneboard.integrations.transformers import PaneboardCallback, tag_of  # noqa: E402


@pytest.fixture(autouse=True)
def _offline(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")  # everything here is built locally: a download would be a bug


class Tokens(torch.utils.data.Dataset):
    def __init__(self, n: int = 32) -> None:
        g = torch.Generator().manual_seed(0)
        self.ids = torch.randint(0, 64, (n, 12), generator=g)
        self.labels = torch.randint(0, 2, (n,), generator=g)

    def __len__(self) -> int:
        return len(self.ids)

    def __getitem__(self, i: int) -> dict[str, Any]:
        return {"input_ids": self.ids[i], "labels": self.labels[i]}


def trainer(tmp_path: Any, callbacks: list, report_to: list[str], steps: int = 8, eval_steps: int = 0,
            save_steps: int = 0) -> Any:
    config = transformers.BertConfig(vocab_size=64, hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                                     intermediate_size=32, max_position_embeddings=16, num_labels=2)
    model = transformers.BertForSequenceClassification(config)
    args = transformers.TrainingArguments(output_dir=str(tmp_path / "out"), max_steps=steps, logging_steps=1,
                                          per_device_train_batch_size=4, report_to=report_to,
                                          save_strategy="steps" if save_steps else "no", save_steps=save_steps or 500,
                                          save_total_limit=1 if save_steps else None,
                                          eval_strategy="steps" if eval_steps else "no", eval_steps=eval_steps or None,
                                          disable_tqdm=True, use_cpu=True, run_name="tiny-bert")
    return transformers.Trainer(model=model, args=args, train_dataset=Tokens(), callbacks=callbacks,
                                eval_dataset=Tokens(8) if eval_steps else None)


def test_keys_are_grouped_as_the_trainer_groups_them():
    assert (tag_of("loss"), tag_of("eval_loss"), tag_of("learning_rate")) == ("train/loss", "eval/loss",
                                                                                "train/learning_rate")


def test_every_logged_step_arrives_with_the_config(server: Any, tmp_path: Any):
    cb = PaneboardCallback(server="http://127.0.0.1", port=server.port)
    t = trainer(tmp_path, [cb], report_to=[])
    t.train()
    assert cb.writer.flush(timeout=30)
    series = server.series("tiny-bert", "train/loss")
    assert list(series) == ["train/loss"]  # the hparams session adds no stray trace to a metric's pane
    loss = series["train/loss"]
    assert [x for x, _ in loss] == list(range(1, 9))
    (session,) = server.get_json("/api/v1/hparams?envs=tiny-bert")["sessions"]
    assert session["hparams"]["model/hidden_size"] == 16 and session["hparams"]["args/max_steps"] == 8
    assert "train/loss" in session["metrics"]
    wins = {p["win"] for p in server.get_json("/api/v1/envs/tiny-bert")["panes"]}
    assert "model" in wins and "train/learning_rate" in wins


def test_the_trainers_own_tensorboard_callback_writes_through_a_paneboard_summary_writer(server: Any, tmp_path: Any):
    from transformers.integrations import TensorBoardCallback

    writer = paneboard.SummaryWriter("hf-tb", server="http://127.0.0.1", port=server.port)
    t = trainer(tmp_path, [TensorBoardCallback(tb_writer=writer)], report_to=[])
    t.train()
    assert writer.flush(timeout=30)
    loss = server.series("hf-tb", "train/loss")["train/loss"]
    assert len(loss) == 8
    assert not any("tfevents" in f for _, _, files in os.walk(tmp_path) for f in files)  # no event files


def test_evaluate_after_train_lands_through_the_tensorboard_callbacks_writer(server: Any, tmp_path: Any):
    from transformers.integrations import TensorBoardCallback

    writer = paneboard.SummaryWriter("hf-eval", server="http://127.0.0.1", port=server.port)
    t = trainer(tmp_path, [TensorBoardCallback(tb_writer=writer)], report_to=[], eval_steps=4)
    t.train()  # evaluates at steps 4 and 8, then closes the writer (on_train_end) and drops it
    t.evaluate()  # the README's route: the callback must log this one through the same writer
    assert writer.flush(timeout=30)
    evals = server.series("hf-eval", "eval/loss")["eval/loss"]
    assert [x for x, _ in evals] == [4, 8, 8]
    assert not any("tfevents" in f for _, _, files in os.walk(tmp_path) for f in files)  # no local event files
    run = server.get_json("/api/v1/envs/hf-eval/run")
    assert run["status"] == "running" and run["provenance"]["pid"] == os.getpid()  # the same run, going on
    writer.close()
    assert server.get_json("/api/v1/envs/hf-eval/run")["status"] == "finished"


def test_save_steps_checkpoints_are_uploaded_when_asked(server: Any, tmp_path: Any):
    cb = PaneboardCallback(server="http://127.0.0.1", port=server.port, log_checkpoints=True)
    trainer(tmp_path, [cb], report_to=[], save_steps=4).train()  # saves at 4 and 8; the limit deletes step 4's
    assert [ref.wait(30) for ref in cb.artifacts] == ["checkpoint-tiny-bert:v1", "checkpoint-tiny-bert:v2"]
    versions = server.get_json("/api/v1/artifacts/checkpoint-tiny-bert/versions")["versions"]
    assert [(v["step"], v["type"], v["env"]) for v in versions] == [(4, "checkpoint", "tiny-bert"),
                                                                   (8, "checkpoint", "tiny-bert")]
    assert "model.safetensors" in {f["path"] for f in versions[0]["files"]}  # rotated out, still stored whole
    assert not (tmp_path / "out" / "checkpoint-4").exists()
    cb.writer.client.close_connection(10)
