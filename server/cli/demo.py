"""`dash-server --demo`: a fake training run streamed live into env 'demo' with the real SDK."""

from __future__ import annotations

import logging
import math
import random
import time
import urllib.request

import numpy as np

from ..settings import Settings

log = logging.getLogger("paneboard.demo")


def start_demo_when_ready(settings: Settings, steps: int | None = None) -> None:
    host = "127.0.0.1" if settings.host in ("0.0.0.0", "::", "") else settings.host
    base = f"http://{host}:{settings.port}{settings.base_url}"
    ready = urllib.request.Request(base + "api/v1/envs")
    if settings.token:
        ready.add_header("Authorization", f"Bearer {settings.token}")
    for _ in range(300):
        try:
            urllib.request.urlopen(ready, timeout=1).close()
            break
        except OSError:
            time.sleep(0.1)
    try:
        run_demo(f"http://{host}", settings.port, settings.base_url.rstrip("/"), steps=steps, token=settings.token)
    except Exception:
        log.exception("the demo run stopped")


def _sample_image(epoch: int) -> np.ndarray:
    """A 3x64x64 picture that changes with the epoch (what a 'sample prediction' pane would show)."""
    yy, xx = np.mgrid[0:64, 0:64] / 63.0
    phase = epoch * 0.7
    r = 0.5 + 0.5 * np.sin(6 * xx + phase)
    g = 0.5 + 0.5 * np.sin(6 * yy - phase)
    b = 0.5 + 0.5 * np.cos(8 * (xx * yy) + phase)
    return np.stack([r, g, b]).astype(np.float32)


def run_demo(server: str, port: int, base_url: str = "", steps: int | None = None, delay: float = 0.05,
             token: str | None = None) -> None:
    import paneboard

    client = paneboard.Client(server=server, port=port, base_url=base_url, env="demo", token=token)
    client.text("<b>demo run</b>: a fake classifier training live. Open the panes below.", win="log",
                opts={"title": "log"})
    rng = random.Random(0)
    points = np.random.default_rng(0).normal(size=(300, 2)) + np.repeat(np.array([[0, 0], [3, 3], [-3, 3]]), 100, 0)
    client.scatter(X=points, Y=np.repeat([1, 2, 3], 100), win="embedding",
                   opts={"title": "embedding (3 classes)", "legend": ["cat", "dog", "bird"]})
    step, epoch = 0, 0
    while steps is None or step < steps:
        loss = 2.3 * math.exp(-step / 400) + 0.05 + 0.08 * rng.random()
        acc = 1 - 0.9 * math.exp(-step / 500) - 0.03 * rng.random()
        client.line(X=[step], Y=[loss], win="loss", update="append", opts={"title": "train loss", "xlabel": "step"})
        client.line(X=[[step, step]], Y=[[acc, acc - 0.05 * rng.random()]], win="accuracy", update="append",
                    opts={"title": "accuracy", "legend": ["train", "val"], "xlabel": "step"})
        client.line(X=[step], Y=[1e-3 * 0.5 * (1 + math.cos(math.pi * (step % 1000) / 1000))], win="lr",
                    update="append", opts={"title": "learning rate", "xlabel": "step"})
        if step % 200 == 0:
            client.image(_sample_image(epoch), win="sample", opts={"title": "sample", "caption": f"epoch {epoch}"})
            client.text(f"epoch {epoch}: loss {loss:.3f}, accuracy {acc:.3f}", win="log", append=True)
            epoch += 1
        step += 1
        time.sleep(delay)
    client.flush(timeout=10)
