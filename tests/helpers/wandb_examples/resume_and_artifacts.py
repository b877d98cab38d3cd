# The run attributes and artifacts W&B scripts use: run.name/id/dir, an Artifact with add_file, log_artifact.
import json
import os

import paneboard as wandb

run = wandb.init(project="artifacts", name="ckpt", config={"seed": 1}, job_type="train")
print(f"run {run.name} ({run.id}) writes to {run.dir}")
for step in range(5):
    run.log({"loss": 1.0 / (step + 1), "step_sq": step * step})
path = os.path.join(run.dir, "model.json")
with open(path, "w") as f:
    json.dump({"weights": [1, 2, 3]}, f)
artifact = wandb.Artifact("mlp-model", type="model", metadata={"epochs": 5})
artifact.add_file(path)
run.log_artifact(artifact)
wandb.alert(title="done", text="training finished", level="INFO")
wandb.finish()
