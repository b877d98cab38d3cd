"""A tiny BERT classifier, built locally (no download), trained by the Hugging Face Trainer with
PaneboardCallback (< 1 min on CPU).

    dash-server &   then   python examples/train_hf_trainer.py [--port 8097] [--env hf-demo]
"""

from __future__ import annotations

import argparse
import tempfile

import torch
import transformers

from paneboard.integrations.transformers import PaneboardCallback


class Parity(torch.utils.data.Dataset):
    """Token sequences labelled by whether token 7 occurs an odd number of times."""

    def __init__(self, n: int, seed: int) -> None:
        g = torch.Generator().manual_seed(seed)
        self.ids = torch.randint(0, 32, (n, 16), generator=g)
        self.labels = ((self.ids == 7).sum(1) % 2).long()

    def __len__(self) -> int:
        return len(self.ids)

    def __getitem__(self, i: int) -> dict:
        return {"input_ids": self.ids[i], "labels": self.labels[i]}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--server", default="http://localhost")
    p.add_argument("--port", type=int, default=8097)
    p.add_argument("--env", default="hf-demo")
    args = p.parse_args()
    config = transformers.BertConfig(vocab_size=32, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                                     intermediate_size=64, max_position_embeddings=32, num_labels=2)
    with tempfile.TemporaryDirectory() as out:
        training = transformers.TrainingArguments(output_dir=out, max_steps=120, logging_steps=5, eval_steps=30,
                                                  eval_strategy="steps", per_device_train_batch_size=32,
                                                  learning_rate=3e-3, report_to=[], save_strategy="no",
                                                  use_cpu=True, run_name=args.env)
        trainer = transformers.Trainer(model=transformers.BertForSequenceClassification(config), args=training,
                                       train_dataset=Parity(4096, 0), eval_dataset=Parity(512, 1),
                                       callbacks=[PaneboardCallback(server=args.server, port=args.port)])
        trainer.train()
    print(f"done: open {args.server}:{args.port}/env/{args.env}")


if __name__ == "__main__":
    main()
