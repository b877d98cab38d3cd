"""Readable generated run names, as W&B's (`adjective-noun-N`)."""

from __future__ import annotations

import random

_ADJECTIVES = ("amber", "brisk", "calm", "dawn", "eager", "fine", "gentle", "hardy", "icy", "jolly", "keen",
               "lucid", "misty", "noble", "olive", "proud", "quiet", "rapid", "sunny", "tidy", "vivid", "warm")
_NOUNS = ("river", "forest", "comet", "meadow", "harbor", "canyon", "glacier", "lagoon", "summit", "breeze",
          "orbit", "pebble", "prairie", "sparrow", "thunder", "valley", "willow", "ember", "falcon", "dune")


def generated_name() -> str:
    r = random.SystemRandom()
    return f"{r.choice(_ADJECTIVES)}-{r.choice(_NOUNS)}-{r.randint(1, 9999)}"
