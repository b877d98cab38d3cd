# The "simple PyTorch integration" example's shape: wandb.config, wandb.watch, log(step=example_ct), test
# accuracy in the summary, a table of predictions.
import torch
from torch import nn

import paneboard as wandb

torch.manual_seed(0)
config = dict(epochs=3, batch_size=16, learning_rate=0.05, architecture="MLP")
with wandb.init(project="pytorch-demo", name="mlp", config=config) as run:
    config = wandb.config
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
    optimizer = torch.optim.SGD(model.parameters(), lr=config.learning_rate)
    criterion = nn.CrossEntropyLoss()
    wandb.watch(model, criterion, log="all", log_freq=5)
    x = torch.randn(64, 4)
    y = (x[:, 0] > 0).long()
    example_ct = 0
    for epoch in range(config.epochs):
        for i in range(0, 64, config.batch_size):
            loss = criterion(model(x[i:i + config.batch_size]), y[i:i + config.batch_size])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            example_ct += config.batch_size
            wandb.log({"epoch": epoch, "loss": loss}, step=example_ct)
    with torch.no_grad():
        pred = model(x).argmax(1)
    accuracy = (pred == y).float().mean().item()
    wandb.log({"test_accuracy": accuracy})
    run.summary["test_accuracy"] = accuracy
    table = wandb.Table(columns=["id", "truth", "guess"])
    for k in range(5):
        table.add_data(k, int(y[k]), int(pred[k]))
    wandb.log({"predictions": table})
