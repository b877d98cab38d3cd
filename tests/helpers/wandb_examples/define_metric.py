# W&B's "customize log axes" guide: a custom x axis per section with define_metric and globs.
import paneboard as wandb

wandb.init(project="axes", name="custom-steps")
wandb.define_metric("train/step")
wandb.define_metric("train/*", step_metric="train/step")
wandb.define_metric("val/step")
wandb.define_metric("val/*", step_metric="val/step")
wandb.define_metric("val/loss", summary="min", goal="minimize")
for i in range(20):
    log_dict = {"train/step": 2 ** i, "train/loss": 0.1 * i}
    if i % 5 == 0:
        log_dict.update({"val/step": i // 5, "val/loss": 1.0 / (1 + i)})
    wandb.log(log_dict)
wandb.finish()
