# W&B's quickstart, in its style: init with a config, log metrics each epoch, finish.
import random

import paneboard as wandb

random.seed(0)
epochs = 10
lr = 0.01
run = wandb.init(project="my-awesome-project", name="quickstart", config={"learning_rate": lr, "epochs": epochs})
offset = random.random() / 5
for epoch in range(2, epochs):
    acc = 1 - 2 ** -epoch - random.random() / epoch - offset
    loss = 2 ** -epoch + random.random() / epoch + offset
    wandb.log({"acc": acc, "loss": loss})
wandb.finish()
