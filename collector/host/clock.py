"""Time for the engine: a monotonic clock, sleeping, wall time, and a periodic timer.

:class:`SystemClock` is the real one; the periodic timer runs on a daemon thread (the power sampler's
thread). Tests pass a virtual clock with the same methods, so windows and samples can be replayed
deterministically.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Protocol


class Timer(Protocol):
    """A running periodic call; :meth:`cancel` stops it."""

    def cancel(self) -> None:
        """Stop calling, and wait for a call in flight to end."""
        ...


class Clock(Protocol):
    """What the engine needs of time."""

    def monotonic(self) -> float:
        """Seconds on a clock that never goes back."""
        ...

    def sleep(self, seconds: float) -> None:
        """Wait ``seconds``."""
        ...

    def utc_now(self) -> datetime:
        """The current time, timezone-aware UTC."""
        ...

    def call_every(self, period_s: float, fn: Callable[[], None]) -> Timer:
        """Call ``fn`` every ``period_s`` seconds (fixed rate) until the returned timer is cancelled."""
        ...


class _ThreadTimer:
    """A daemon thread calling ``fn`` at a fixed rate; an exception from ``fn`` stops it."""

    def __init__(self, period_s: float, fn: Callable[[], None]) -> None:
        self._period_s = period_s
        self._fn = fn
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="ecocompute-sampler", daemon=True)
        self._thread.start()

    def _loop(self) -> None:
        next_s = time.monotonic()
        while not self._stop.is_set():
            self._fn()
            next_s += self._period_s
            delay_s = next_s - time.monotonic()
            if delay_s < 0:  # fell behind (a slow read): skip the missed ticks rather than burst
                next_s = time.monotonic()
                delay_s = 0.0
            self._stop.wait(delay_s)

    def cancel(self) -> None:
        """Stop the thread and wait for it."""
        self._stop.set()
        if self._thread is not threading.current_thread():
            self._thread.join()


class SystemClock:
    """The real clock: ``time.monotonic``, ``time.sleep``, UTC wall time, a thread for periodic calls."""

    def monotonic(self) -> float:
        """``time.monotonic()``."""
        return time.monotonic()

    def sleep(self, seconds: float) -> None:
        """``time.sleep(seconds)``."""
        if seconds > 0:
            time.sleep(seconds)

    def utc_now(self) -> datetime:
        """The current UTC time."""
        return datetime.now(UTC)

    def call_every(self, period_s: float, fn: Callable[[], None]) -> Timer:
        """Start a daemon thread calling ``fn`` every ``period_s`` s; ``fn`` must catch its own errors."""
        return _ThreadTimer(period_s, fn)
