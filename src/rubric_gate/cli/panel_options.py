"""`--judge` (repeatable) and `--samples` shared by `judge` and `check`."""

from __future__ import annotations

from collections.abc import Sequence

import click


def _odd(ctx: click.Context, param: click.Parameter, value: int) -> int:
    if value < 1 or value % 2 == 0:
        raise click.BadParameter(f"must be an odd number >= 1 (a majority always exists), got {value}")
    return value


__all__ = ["samples_option", "unique_judges"]

samples_option = click.option(
    "--samples", type=int, default=1, show_default=True, callback=_odd,
    help="Ask each (check, item) pair N times (odd); the gate uses the majority answer.")


def unique_judges(judges: Sequence[str]) -> list[str]:
    """`--judge a --judge a,b` -> [a, b]: repeats and comma lists both work (the action passes a list)."""
    out: list[str] = []
    for value in judges:
        for spec in value.split(","):
            spec = spec.strip()
            if spec and spec not in out:
                out.append(spec)
    return out
