"""One place that maps exceptions to exit codes and one-line messages."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable
from functools import wraps
from typing import Any

from rubric_gate.cli.common import silence_stdout
from rubric_gate.errors import EXIT_BAD_INPUT, RubricGateError
from rubric_gate.report.terminal import strip_controls

EXIT_INTERRUPTED = 130


def _print_json_error(exc: RubricGateError, message: str) -> None:
    import json

    error: dict[str, Any] = {"message": message, "exit_code": exc.exit_code, "kind": type(exc).__name__}
    for key in ("missing", "examples", "verdicts", "rubric_path"):
        value = getattr(exc, key, None)
        if value:
            error[key] = value
    with contextlib.suppress(OSError):  # a closed stdout: the message is on stderr already
        print(json.dumps({"decision": None, "error": error}, ensure_ascii=False, indent=2))


def handle_errors(command: Callable[..., int]) -> Callable[..., int]:
    """Run a command; print known errors as `rubric-gate: error: where: what` and exit with their code."""

    @wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> int:
        try:
            return command(*args, **kwargs)
        except RubricGateError as exc:
            # One line, whatever a library put in it; no escape sequences from file names or ids.
            message = strip_controls(" ".join(exc.message.splitlines()))
            print(f"rubric-gate: error: {message}", file=sys.stderr)
            if kwargs.get("fmt") == "json":  # a JSON reader gets an object on stdout, not nothing
                _print_json_error(exc, message)
            return exc.exit_code
        except MemoryError:
            # Not exit 1: that code means "the gate failed", and nothing was decided here.
            print("rubric-gate: error: out of memory (the verdict store or calibration set is too large "
                  "for this machine's memory)", file=sys.stderr)
            return EXIT_BAD_INPUT
        except KeyboardInterrupt:
            print("rubric-gate: interrupted", file=sys.stderr)
            return EXIT_INTERRUPTED
        except BrokenPipeError:
            silence_stdout()
            return 0
        except OSError as exc:
            where = getattr(exc, "filename", None) or "<io>"
            print(f"rubric-gate: error: {where}: {exc.strerror or exc}", file=sys.stderr)
            return EXIT_BAD_INPUT

    return wrapper
