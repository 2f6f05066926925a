"""What a person sees while the collector runs: a live table on a terminal, short lines in a log.

Every figure shown comes from :func:`ecocompute.schema.derive.derive`, the one derivation.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from rich.console import Console
from rich.live import Live
from rich.table import Table

from ecocompute.collector.state import MeasurementState
from ecocompute.schema.derive import derive
from ecocompute.schema.models import Window


class View(Protocol):
    """Receives progress; :func:`make_view` picks one."""

    def start(self, states: Sequence[MeasurementState], max_windows: int) -> None:
        """The run begins (or resumes) with these measurements."""
        ...

    def update(self, state: MeasurementState, window: Window | None, warmup: bool, idle_power_w: float) -> None:
        """A window finished (``window``), or a precision failed (``None``)."""
        ...

    def note(self, text: str) -> None:
        """A short message (loading, idle, cooldown)."""
        ...

    def stop(self) -> None:
        """The run ended."""
        ...


def figures(state: MeasurementState, idle_power_w: float) -> dict[str, str]:
    """The displayed figures of one measurement, formatted."""
    if not state.windows:
        return {"J/token": "", "95% CI": "", "CV %": "", "tokens/s": "", "util %": ""}
    d = derive(state.windows, idle_power_w)
    utils = [w.gpu_util_pct_mean for w in state.windows if w.gpu_util_pct_mean is not None]
    return {
        "J/token": f"{d.j_per_token_mean:.4f}",
        "95% CI": "n/a" if d.ci95_pct is None else f"±{d.ci95_pct:.2f}%",
        "CV %": f"{d.cv_pct:.2f}",
        "tokens/s": f"{d.tokens_per_s:.1f}",
        "util %": f"{sum(utils) / len(utils):.0f}" if utils else "",
    }


def status(state: MeasurementState) -> str:
    """``measuring``, ``done`` or the error."""
    if state.error:
        return f"failed: {state.error[:60]}"
    return "done" if state.finished else "measuring"


class SilentView:
    """Shows nothing (``--quiet``)."""

    def start(self, states: Sequence[MeasurementState], max_windows: int) -> None:
        """Nothing."""

    def update(self, state: MeasurementState, window: Window | None, warmup: bool, idle_power_w: float) -> None:
        """Nothing."""

    def note(self, text: str) -> None:
        """Nothing."""

    def stop(self) -> None:
        """Nothing."""


class LineView:
    """One short line per window, for logs (standard output is not a terminal)."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self.max_windows = 0

    def start(self, states: Sequence[MeasurementState], max_windows: int) -> None:
        """Remember the window cap."""
        self.max_windows = max_windows

    def update(self, state: MeasurementState, window: Window | None, warmup: bool, idle_power_w: float) -> None:
        """Print one line."""
        name = state.precision.value
        if window is None:
            self.console.print(f"{name}: failed: {state.error}")
            return
        jpt = window.energy_j / window.tokens
        if warmup:
            self.console.print(f"{name} warm-up {window.index + 1}: {window.duration_s:.1f} s, {jpt:.4f} J/token")
            return
        f = figures(state, idle_power_w)
        self.console.print(
            f"{name} {len(state.windows)}/{self.max_windows}: {jpt:.4f} J/token; mean {f['J/token']} "
            f"{f['95% CI']} CV {f['CV %']}%{' (done)' if state.finished else ''}"
        )

    def note(self, text: str) -> None:
        """Print the message."""
        self.console.print(text)

    def stop(self) -> None:
        """Nothing to close."""


class LiveView:
    """A table redrawn in place: each precision's windows, mean J/token and confidence interval."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self.states: list[MeasurementState] = []
        self.max_windows = 0
        self.idle_power_w = 0.0
        self.message = ""
        self.live = Live(console=console, auto_refresh=False, transient=False)

    def _table(self) -> Table:
        table = Table(title=self.message or None, title_justify="left")
        for column in ("precision", "windows", "J/token", "95% CI", "CV %", "tokens/s", "util %", "status"):
            table.add_column(column, justify="left" if column in ("precision", "status") else "right")
        for s in self.states:
            f = figures(s, self.idle_power_w)
            warm = f" (+{len(s.warmup)} warm-up)" if s.warmup else ""
            table.add_row(s.precision.value, f"{len(s.windows)}/{self.max_windows}{warm}", *f.values(), status(s))
        return table

    def _refresh(self) -> None:
        self.live.update(self._table(), refresh=True)

    def start(self, states: Sequence[MeasurementState], max_windows: int) -> None:
        """Show the table."""
        self.states, self.max_windows = list(states), max_windows
        self.live.start()
        self._refresh()

    def update(self, state: MeasurementState, window: Window | None, warmup: bool, idle_power_w: float) -> None:
        """Redraw."""
        self.idle_power_w = idle_power_w
        self._refresh()

    def note(self, text: str) -> None:
        """Show the message as the table's title."""
        self.message = text
        if self.states:
            self._refresh()
        else:
            self.console.print(text)

    def stop(self) -> None:
        """Leave the last table on screen."""
        self.message = ""
        if self.states:
            self._refresh()
        self.live.stop()


def make_view(console: Console, quiet: bool) -> View:
    """Silent with ``quiet``; a live table on a terminal; lines otherwise."""
    if quiet:
        return SilentView()
    return LiveView(console) if console.is_terminal else LineView(console)
