"""The small CNN (a residual block included) whose graph the model-graph tests trace and render."""

from __future__ import annotations

import torch
from torch import nn


class Block(nn.Module):
    def __init__(self, c: int) -> None:
        super().__init__()
        self.conv = nn.Conv2d(c, c, 3, padding=1)
        self.bn = nn.BatchNorm2d(c)

    def forward(self, x):
        return torch.relu(self.bn(self.conv(x)) + x)  # the residual: x skips conv and bn


class Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2))
        self.res = Block(8)
        self.head = nn.Linear(8 * 16 * 16, 10)

    def forward(self, x):
        return self.head(self.res(self.features(x)).flatten(1))
