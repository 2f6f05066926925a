"""What a person sees while the collector runs: a live table and progress bars on a terminal, lines in a log.

Every figure shown comes from :func:`ecocompute.schema.derive.derive`, the one derivation.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Protocol

from rich.console import Console, Group
from rich.live import Live
from rich.markup import escape
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table

from ecocompute.collector.run.preflight import CheckItem
from ecocompute.collector.run.state import MeasurementState
from ecocompute.schema.derive import derive, window_j_per_token
from ecocompute.schema.models import Window


class View(Protocol):
    """Receives progress; :func:`make_view` picks one."""

    def start(self, states: Sequence[MeasurementState], max_windows: int, warmup_windows: int = 0) -> None:
        """The run begins (or resumes) with these measurements."""
        ...

    def update(self, state: MeasurementState, window: Window | None, warmup: bool, idle_power_w: float) -> None:
        """A window finished (``window``), or a precision failed (``None``)."""
        ...

    def note(self, text: str) -> None:
        """A short message (loading, idle, cooldown)."""
        ...

    def checklist(self, items: Sequence[CheckItem]) -> None:
        """The GPU probed once, before any model loads."""
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
        "util %": f"{sum(utils) / len(utils):.0f}" if utils else "n/a",  # n/a: the GPU does not report it
    }


def status(state: MeasurementState) -> str:
    """``measuring``, ``done`` or the error."""
    if state.error:
        return f"failed: {state.error[:60]}"
    return "done" if state.finished else "measuring"


def planned_windows(state: MeasurementState, max_windows: int, warmup_windows: int) -> int:
    """Windows this precision will measure at most in this session (warm-up included); what is done counts."""
    if state.finished:
        return len(state.windows) + len(state.warmup)
    return max_windows + max(warmup_windows, len(state.warmup))


def done_windows(state: MeasurementState) -> int:
    """Windows measured so far, warm-up included."""
    return len(state.windows) + len(state.warmup)


class Eta:
    """Elapsed time, and the time left at the pace so far: windows still to run x seconds per window."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self.started_s = clock()
        self.first_done = 0

    def start(self, done: int) -> None:
        """Begin timing, with ``done`` windows already measured (a resumed run)."""
        self.started_s, self.first_done = self.clock(), done

    def text(self, done: int, planned: int) -> str:
        """``elapsed 1:02, about 2:30 left`` (no estimate before the first window)."""
        elapsed = self.clock() - self.started_s
        ran = done - self.first_done
        left = "" if ran <= 0 else f", about {_mmss(elapsed / ran * max(0, planned - done))} left"
        return f"elapsed {_mmss(elapsed)}{left}"


def _mmss(seconds: float) -> str:
    minutes, secs = divmod(round(seconds), 60)
    return f"{minutes}:{secs:02d}"


class SilentView:
    """Shows nothing (``--quiet``)."""

    def start(self, states: Sequence[MeasurementState], max_windows: int, warmup_windows: int = 0) -> None:
        """Nothing."""

    def update(self, state: MeasurementState, window: Window | None, warmup: bool, idle_power_w: float) -> None:
        """Nothing."""

    def note(self, text: str) -> None:
        """Nothing."""

    def checklist(self, items: Sequence[CheckItem]) -> None:
        """Nothing."""

    def stop(self) -> None:
        """Nothing."""


class LineView:
    """One short line per window, for logs (standard output is not a terminal)."""

    def __init__(self, console: Console, clock: Callable[[], float] = time.monotonic) -> None:
        self.console = console
        self.max_windows = 0
        self.warmup_windows = 0
        self.states: list[MeasurementState] = []
        self.eta = Eta(clock)

    def start(self, states: Sequence[MeasurementState], max_windows: int, warmup_windows: int = 0) -> None:
        """Remember the window cap and start the clock."""
        self.states, self.max_windows, self.warmup_windows = list(states), max_windows, warmup_windows
        self.eta.start(sum(done_windows(s) for s in self.states))

    def _timing(self) -> str:
        done = sum(done_windows(s) for s in self.states)
        planned = sum(planned_windows(s, self.max_windows, self.warmup_windows) for s in self.states)
        return f"run {done}/{planned} windows, {self.eta.text(done, planned)}"

    def update(self, state: MeasurementState, window: Window | None, warmup: bool, idle_power_w: float) -> None:
        """Print one line."""
        name = state.precision.value
        if window is None:
            self.console.print(f"{name}: failed: {state.error}", markup=False)
            return
        jpt = window_j_per_token(window)
        if warmup:
            self.console.print(f"{name} warm-up {window.index + 1}: {window.duration_s:.1f} s, {jpt:.4f} J/token "
                               f"[{self._timing()}]", markup=False)  # fmt: skip
            return
        f = figures(state, idle_power_w)
        self.console.print(
            f"{name} {len(state.windows)}/{self.max_windows}: {jpt:.4f} J/token; mean {f['J/token']} "
            f"{f['95% CI']} CV {f['CV %']}%{' (done)' if state.finished else ''} [{self._timing()}]",
            markup=False,
        )

    def note(self, text: str) -> None:
        """Print the message."""
        self.console.print(text, markup=False)

    def checklist(self, items: Sequence[CheckItem]) -> None:
        """One line per item."""
        for item in items:
            mark = "ok" if item.ok else "!!"
            self.console.print(f"[{mark}] {item.name}: {item.found} ({item.meaning})", markup=False)

    def stop(self) -> None:
        """Nothing to close."""


class LiveView:
    """A table redrawn in place (each precision's windows, mean J/token, CI, CV) above progress bars.

    One bar per precision and one for the run, each with its elapsed time and the time left at the pace so far.
    """

    def __init__(self, console: Console) -> None:
        self.console = console
        self.states: list[MeasurementState] = []
        self.max_windows = 0
        self.warmup_windows = 0
        self.idle_power_w = 0.0
        self.message = ""
        self.progress = Progress(
            TextColumn("{task.description:<8}"), BarColumn(), MofNCompleteColumn(), TextColumn("windows"),
            TimeElapsedColumn(), TextColumn("left"), TimeRemainingColumn(), console=console,
        )  # fmt: skip
        self.tasks: dict[object, TaskID] = {}
        self.live = Live(console=console, auto_refresh=False, transient=False)

    def _table(self) -> Table:
        table = Table(title=self.message or None, title_justify="left")
        for column in ("precision", "windows", "J/token", "95% CI", "CV %", "tokens/s", "util %", "status"):
            table.add_column(column, justify="left" if column in ("precision", "status") else "right")
        for s in self.states:
            f = figures(s, self.idle_power_w)
            warm = f" (+{len(s.warmup)} warm-up)" if s.warmup else ""
            table.add_row(s.precision.value, f"{len(s.windows)}/{self.max_windows}{warm}", *f.values(),
                          escape(status(s)))  # fmt: skip
        return table

    def _advance(self) -> None:
        for s in self.states:
            planned = planned_windows(s, self.max_windows, self.warmup_windows)
            self.progress.update(self.tasks[s.precision], completed=done_windows(s), total=planned)
        self.progress.update(
            self.tasks["run"], completed=sum(done_windows(s) for s in self.states),
            total=sum(planned_windows(s, self.max_windows, self.warmup_windows) for s in self.states),
        )  # fmt: skip

    def _refresh(self) -> None:
        self._advance()
        self.live.update(Group(self._table(), self.progress), refresh=True)

    def start(self, states: Sequence[MeasurementState], max_windows: int, warmup_windows: int = 0) -> None:
        """Show the table and the bars."""
        self.states, self.max_windows, self.warmup_windows = list(states), max_windows, warmup_windows
        for s in self.states:
            self.tasks[s.precision] = self.progress.add_task(s.precision.value, total=None)
        self.tasks["run"] = self.progress.add_task("run", total=None)
        self.live.start()
        self._refresh()

    def update(self, state: MeasurementState, window: Window | None, warmup: bool, idle_power_w: float) -> None:
        """Redraw."""
        self.idle_power_w = idle_power_w
        self._refresh()

    def checklist(self, items: Sequence[CheckItem]) -> None:
        """The checklist as a table, printed once above the live display."""
        self.console.print(checklist_table(items))

    def note(self, text: str) -> None:
        """Show the message as the table's title."""
        self.message = escape(text)
        if self.states:
            self._refresh()
        else:
            self.console.print(text, markup=False)

    def stop(self) -> None:
        """Leave the last table and bars on screen, each bar full (a run may end before --max-windows)."""
        self.message = ""
        if self.states:
            for s in self.states:
                s_done = done_windows(s)
                self.progress.update(self.tasks[s.precision], completed=s_done, total=s_done)
            run_done = sum(done_windows(s) for s in self.states)
            self.progress.update(self.tasks["run"], completed=run_done, total=run_done)
            self.live.update(Group(self._table(), self.progress), refresh=True)
        self.live.stop()


def checklist_table(items: Sequence[CheckItem]) -> Table:
    """The GPU checklist: each item, what was found, and what it means for the result."""
    table = Table(title="GPU checklist", title_justify="left")
    for column in ("", "item", "found", "what it means"):
        table.add_column(column)
    for item in items:
        table.add_row("[green]ok[/]" if item.ok else "[yellow]!![/]", escape(item.name), escape(item.found),
                      escape(item.meaning))  # fmt: skip
    return table


def make_view(console: Console, quiet: bool) -> View:
    """Silent with ``quiet``; a live table on a terminal; lines otherwise."""
    if quiet:
        return SilentView()
    return LiveView(console) if console.is_terminal else LineView(console)
