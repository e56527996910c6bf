"""Ctrl-C for the console script: a KeyboardInterrupt never lands inside a native library that
would turn it into a crash.

pydantic-core (Rust) calls back into Python while it builds validators; a KeyboardInterrupt
raised in such a callback can become a Rust panic (`pyo3_runtime.PanicException`, printed by
Rust on stderr) instead of passing through: pydantic-core 2.27 (pydantic 2.10) panics so while
it builds its self-schema, and later releases still unwrap the imports of their type table. So
the signal handler looks at the stack first: while one of those libraries is on it, the
interrupt is recorded and delivered again a moment later, once the stack has left the library.
"""

from __future__ import annotations

import signal
from types import FrameType

# Top-level packages whose native code does not pass a KeyboardInterrupt on.
DEFER_INSIDE = frozenset({"pydantic", "pydantic_core"})
RETRY_SECONDS = 0.01  # how soon a deferred interrupt is tried again


class _State:
    received = False  # a SIGINT arrived (delivered or not)
    pending = False  # one arrived inside a native library and waits for the stack to leave it


STATE = _State()


def inside_deferring_library(frame: FrameType | None) -> bool:
    """Whether any frame on the stack from `frame` down belongs to DEFER_INSIDE."""
    while frame is not None:
        name = frame.f_globals.get("__name__")
        if isinstance(name, str) and name.partition(".")[0] in DEFER_INSIDE:
            return True
        frame = frame.f_back
    return False


def _on_signal(signum: int, frame: FrameType | None) -> None:
    if signum == signal.SIGINT:
        STATE.received = True
    elif not STATE.pending:
        return  # an alarm this module did not ask for
    if inside_deferring_library(frame):
        STATE.pending = True
        signal.signal(signal.SIGALRM, _on_signal)
        signal.setitimer(signal.ITIMER_REAL, RETRY_SECONDS)
        return
    STATE.pending = False
    raise KeyboardInterrupt


def install() -> None:
    """Take over SIGINT (first thing in the entry point, before any library is imported)."""
    signal.signal(signal.SIGINT, _on_signal)


def settle() -> bool:
    """At the end of the command: cancel a retry; whether an interrupt was still waiting for one."""
    signal.setitimer(signal.ITIMER_REAL, 0)
    waiting, STATE.pending = STATE.pending, False
    return waiting
