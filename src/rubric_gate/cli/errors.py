"""One place that maps exceptions to exit codes and one-line messages."""

from __future__ import annotations

import contextlib
import os
import sys
import time
from collections.abc import Callable
from functools import wraps
from pathlib import Path
from typing import Any

import click

from rubric_gate.cli.common import silence_stdout
from rubric_gate.errors import EXIT_BAD_INPUT, EXIT_CRASH, RubricGateError

EXIT_INTERRUPTED = 130
CRASH_LOG_DIR = "RUBRIC_GATE_CRASH_LOG_DIR"  # else $RUNNER_TEMP in GitHub Actions, else the temp dir


def crash_log(exc: BaseException) -> Path | None:
    """Write the traceback of an unexpected exception to a file of its own; None if that fails."""
    import tempfile  # a crash only: every run imports this module
    import traceback

    directory = Path(os.environ.get(CRASH_LOG_DIR) or os.environ.get("RUNNER_TEMP") or tempfile.gettempdir())
    path = directory / f"rubric-gate-crash-{time.strftime('%Y%m%dT%H%M%S')}-{os.getpid()}.log"
    try:
        directory.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(traceback.format_exception(exc)), encoding="utf-8")
    except OSError:
        return None
    return path


def _plain(text: str) -> str:
    """`text` without escape sequences (imported for an error only: every command imports this module)."""
    from rubric_gate.report.terminal import strip_controls

    return strip_controls(text)


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
            message = _plain(" ".join(exc.message.splitlines()))
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
        except (click.exceptions.ClickException, click.exceptions.Exit, click.exceptions.Abort):
            raise  # usage errors and exits: click prints them with its own codes (2 for misuse)
        except Exception as exc:  # a bug: exit 3 (never 1, "gate failed"), one line, the traceback in a file
            path = crash_log(exc)
            what = _plain(" ".join(f"{type(exc).__name__}: {exc}".splitlines()))[:300]
            where = f"the traceback is in {path}" if path is not None else "the traceback could not be saved"
            print(f"rubric-gate: internal error (a bug, please report it): {what}; {where}", file=sys.stderr)
            return EXIT_CRASH

    return wrapper
