"""Tuning knobs read from `RUBRIC_GATE_*` environment variables, checked like any other input."""

from __future__ import annotations

import math
import os
from collections.abc import Mapping

from rubric_gate.errors import InputError


def env_number(name: str, default: float, *, integer: bool = False, minimum: float = 0,
               env: Mapping[str, str] | None = None) -> float:
    """The variable's value as a number >= `minimum` (an int when `integer`), else `default`.

    A value that is not such a number is an input error naming the variable (exit 2), not a
    traceback: exit 1 means "gate failed" and must not be reached by a typo.
    """
    env = os.environ if env is None else env
    raw = env.get(name, "").strip()
    if not raw:
        return int(default) if integer else default
    kind = "a whole number" if integer else "a number"
    try:
        value: float = int(raw) if integer else float(raw)
    except ValueError:
        raise InputError(f"environment variable {name}", f"expected {kind} >= {minimum:g}, got {raw!r}") from None
    if not math.isfinite(value) or value < minimum:
        raise InputError(f"environment variable {name}", f"expected {kind} >= {minimum:g}, got {raw!r}")
    return value


def env_int(name: str, default: int, *, minimum: int = 0, env: Mapping[str, str] | None = None) -> int:
    return int(env_number(name, default, integer=True, minimum=minimum, env=env))
