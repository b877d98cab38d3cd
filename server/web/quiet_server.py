"""The uvicorn.Server dash-server runs: a once-a-second housekeeping tick that a stop request wakes at once."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

import uvicorn


class QuietServer(uvicorn.Server):
    """uvicorn's Server whose housekeeping tick (Date header, exit check) runs once a second, not ten times, so an
    idle dashboard beside a training job wakes a tenth as often; a signal, or wake(), ends the tick at once."""

    _loop: asyncio.AbstractEventLoop | None = None
    _wake: asyncio.Event | None = None

    def wake(self) -> None:
        """End the current tick now, from any thread (after should_exit was set, the server then stops)."""
        if self._loop is not None and self._wake is not None:
            with contextlib.suppress(RuntimeError):  # the loop already closed: it has stopped
                self._loop.call_soon_threadsafe(self._wake.set)

    def handle_exit(self, sig: int, frame: Any) -> None:
        super().handle_exit(sig, frame)
        # The handler runs between two bytecodes of the loop's thread, which may sit in its selector for the rest
        # of the tick: only the loop's self-pipe wakes it.
        self.wake()

    async def main_loop(self) -> None:
        self._loop, self._wake = asyncio.get_running_loop(), asyncio.Event()
        counter = 0
        while not await self.on_tick(counter):
            counter = (counter + 10) % 864000  # on_tick refreshes the Date header when counter % 10 == 0
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self._wake.wait(), 1.0)
