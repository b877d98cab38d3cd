# Logging media as W&B's examples do: images with captions, histograms, HTML, nested dicts of metrics.
import numpy as np

import paneboard as wandb

rng = np.random.default_rng(0)
run = wandb.init(project="media", name="gallery", notes="media demo", tags=["media"])
for step in range(3):
    img = rng.random((16, 16, 3))
    normalised = (img - 0.45) / 0.225  # an ImageNet-normalised picture
    wandb.log({
        "examples": wandb.Image(img, caption=f"step {step}"),
        "normalised": wandb.Image(normalised),
        "weights": wandb.Histogram(rng.normal(size=1000)),
        "grads": rng.normal(size=100),
        "metrics": {"train": {"loss": 1.0 / (step + 1)}, "lr": 0.1},
        "report": wandb.Html(f"<b>step {step}</b>"),
    })
run.finish()
