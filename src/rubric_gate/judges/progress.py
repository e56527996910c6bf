"""Progress: a rich bar on a terminal, plain periodic log lines elsewhere (CI)."""

from __future__ import annotations

import sys
import time
from typing import TextIO

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from rubric_gate.tuning import env_number


class ProgressReporter:
    def __init__(self, total: int, label: str, *, enabled: bool | None = None, stream: TextIO | None = None) -> None:
        self.total = total
        self.done = 0
        self.retries = 0
        self.label = label
        self.stream = stream or sys.stderr
        self.started = time.monotonic()
        self.interval = env_number("RUBRIC_GATE_PROGRESS_INTERVAL", 10.0)
        self._last_line = self.started
        self._bar: Progress | None = None
        self.enabled = enabled is not False and total > 0
        is_tty = self.stream.isatty()
        if self.enabled and is_tty:
            self._bar = Progress(
                TextColumn("{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("{task.fields[rate]}"),
                TimeElapsedColumn(),
                TextColumn("ETA"),
                TimeRemainingColumn(),
                TextColumn("{task.fields[retries]} retries"),
                console=Console(file=self.stream),
                transient=False,
            )
            self._task = self._bar.add_task(label, total=total, rate="", retries=0)
            self._bar.start()

    def _rate(self) -> float:
        elapsed = time.monotonic() - self.started
        return self.done / elapsed if elapsed > 0 else 0.0

    def advance(self, n: int = 1) -> None:
        self.done += n
        self._update()

    def retry(self) -> None:
        self.retries += 1
        self._update()

    def _update(self) -> None:
        if not self.enabled:
            return
        if self._bar is not None:
            self._bar.update(self._task, completed=self.done, rate=f"{self._rate():.1f}/s", retries=self.retries)
            return
        now = time.monotonic()
        if now - self._last_line >= self.interval:
            self._last_line = now
            self._line()

    def _line(self) -> None:
        rate = self._rate()
        remaining = self.total - self.done
        eta = f"{remaining / rate:.0f}s" if rate > 0 else "?"
        print(
            f"{self.label}: {self.done}/{self.total} verdicts, {rate:.1f}/s, ETA {eta}, {self.retries} retries",
            file=self.stream,
            flush=True,
        )

    def close(self) -> None:
        if self._bar is not None:
            self._bar.stop()
        elif self.enabled and self.done:  # nothing done (e.g. auth failed): the error says it all
            self._line()
