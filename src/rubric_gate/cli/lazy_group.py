"""A click group whose commands are imported when they run, not when the program starts."""

from __future__ import annotations

import gc
import importlib
import importlib.util
import os
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any

import click

# Commands that multiply matrices (scikit-learn's models, `vectors @ vectors.T`): OpenBLAS may
# spread those over its threads, and how many can change the last bits of a product.
THREADED_BLAS = frozenset({"discover", "audit"})


class LazyGroup(click.Group):
    """Commands from a table of (name, "module:attribute", summary).

    `--help` lists the summaries without importing anything; a command's module is imported
    only when that command is looked up (to run it or show its own help). An entry whose
    module is not installed is left out, as before the table was lazy.

    With `freeze_imports` (the console script's process, which starts with the cyclic collector
    paused), a command's modules are imported with the collector still paused, then what the
    imports made is frozen out of its reach and the collector resumes: classes, schemas and
    functions live as long as the process, and the collector otherwise went over them a hundred
    times while they were built (a twentieth of a rerun of `check`). A command outside
    `THREADED_BLAS` also gets one OpenBLAS thread (`OPENBLAS_NUM_THREADS`, unless set): as numpy
    loads, OpenBLAS starts a thread per core that spins before it sleeps, 20-25 ms of CPU in a
    rerun of `check` (about 0.36 s), which multiplies no matrix.
    """

    freeze_imports = False

    def __init__(self, *args: Any, lazy_commands: Iterable[tuple[str, str, str]] = (), **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.lazy_commands = {name: (target, summary) for name, target, summary in lazy_commands}

    def _available(self, name: str) -> bool:
        module = self.lazy_commands[name][0].partition(":")[0]
        try:
            return importlib.util.find_spec(module) is not None
        except ModuleNotFoundError:
            return False

    def list_commands(self, ctx: click.Context | None) -> list[str]:
        lazy = [name for name in self.lazy_commands if self._available(name)]
        return lazy + sorted(name for name in self.commands if name not in self.lazy_commands)

    def get_command(self, ctx: click.Context | None, cmd_name: str) -> click.Command | None:
        command = self.commands.get(cmd_name)
        if command is not None or cmd_name not in self.lazy_commands or not self._available(cmd_name):
            return command
        module_name, _, attribute = self.lazy_commands[cmd_name][0].partition(":")
        with self._importing(cmd_name):
            command = getattr(importlib.import_module(module_name), attribute)
        if not isinstance(command, click.Command):
            raise TypeError(f"{module_name}:{attribute} is not a click command")
        self.add_command(command, cmd_name)
        return command

    @contextmanager
    def _importing(self, name: str) -> Iterator[None]:
        if not self.freeze_imports:
            yield
            return
        if name not in THREADED_BLAS:
            os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
        gc.disable()
        try:
            yield
        finally:
            gc.freeze()
            gc.enable()

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        names = self.list_commands(ctx)
        limit = formatter.width - 6 - max((len(name) for name in names), default=0)
        rows = []
        for name in names:
            if name in self.lazy_commands:
                summary = click.Command(name, help=self.lazy_commands[name][1])  # truncated as click does
                rows.append((name, summary.get_short_help_str(limit)))
            elif not self.commands[name].hidden:
                rows.append((name, self.commands[name].get_short_help_str(limit)))
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)
