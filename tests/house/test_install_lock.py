"""tests/install_lock.py: every pinned line of the lock goes to exactly one pip, and nothing else does."""

from __future__ import annotations

import re

import install_lock


def test_the_shares_install_every_pinned_package_exactly_once() -> None:
    pinned = install_lock.pinned(install_lock.LOCK)
    lines = install_lock.LOCK.read_text().splitlines()
    assert len(pinned) == sum(1 for line in lines if re.match(r"[A-Za-z0-9]", line))
    assert all(re.fullmatch(r"[A-Za-z0-9._-]+(\[[\w,]+\])?==[\w.+!-]+", p) for p in pinned), pinned
    assert any(p.startswith("torch==") for p in pinned)
    for n in (1, 2, 3, 4):
        shares = install_lock.shares(pinned, n)
        assert len(shares) == n and sorted(sum(shares, [])) == sorted(pinned)
