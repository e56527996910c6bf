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


def _print_json_error(exc: BaseException, message: str, code: int, totals: list[Any] | None = None) -> None:
    """The one JSON object a failed `--format json` run prints: no decision, the error, the totals."""
    import json

    error: dict[str, Any] = {"message": message, "exit_code": code, "kind": type(exc).__name__}
    for key in ("missing", "examples", "verdicts", "rubric_path", "failures"):
        value = getattr(exc, key, None)
        if value:
            error[key] = value
    data: dict[str, Any] = {"decision": None, "error": error}
    if totals:  # the calls the run made before it failed: one statistics object each
        data["totals"] = [stats.to_dict() for stats in totals]
    with contextlib.suppress(OSError):  # a closed stdout: the message is on stderr already
        print(json.dumps(data, ensure_ascii=False, indent=2))


def wants_json(kwargs: dict[str, Any]) -> bool:
    """Whether the command prints JSON: every command names its format `fmt` (`--format json`,
    or `judge --json`, whose flag sets `fmt` to "json")."""
    return kwargs.get("fmt") == "json"


def handle_errors(command: Callable[..., int]) -> Callable[..., int]:
    """Run a command; print known errors as `rubric-gate: error: where: what` and exit with their code."""

    @wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> int:
        try:
            return command(*args, **kwargs)
        except RubricGateError as exc:
            # One line, whatever a library put in it; no escape sequences from file names or ids.
            # imported on an error's path only: every command imports this module
            from rubric_gate.llm.accounting import run_totals

            message = _plain(" ".join(exc.message.splitlines()))
            totals = run_totals(exc)
            for stats in totals:  # a run that fails still says what it spent (when it spent anything)
                if stats.calls or stats.retries:
                    print(_plain(stats.summary), file=sys.stderr)
            print(f"rubric-gate: error: {message}", file=sys.stderr)
            if wants_json(kwargs):  # a JSON reader gets one object on stdout, not nothing
                _print_json_error(exc, message, exc.exit_code, totals)
            return exc.exit_code
        except MemoryError as exc:
            # Not exit 1: that code means "the gate failed", and nothing was decided here.
            message = ("out of memory (the verdict store or calibration set is too large for this machine's "
                       "memory)")
            print(f"rubric-gate: error: {message}", file=sys.stderr)
            if wants_json(kwargs):
                _print_json_error(exc, message, EXIT_BAD_INPUT)
            return EXIT_BAD_INPUT
        except KeyboardInterrupt as exc:
            print("rubric-gate: interrupted", file=sys.stderr)
            if wants_json(kwargs):
                _print_json_error(exc, "interrupted", EXIT_INTERRUPTED)
            return EXIT_INTERRUPTED
        except BrokenPipeError:
            silence_stdout()
            return 0
        except OSError as exc:
            where = getattr(exc, "filename", None) or "<io>"
            message = _plain(f"{where}: {exc.strerror or exc}")
            print(f"rubric-gate: error: {message}", file=sys.stderr)
            if wants_json(kwargs):
                _print_json_error(exc, message, EXIT_BAD_INPUT)
            return EXIT_BAD_INPUT
        except click.exceptions.ClickException as exc:
            # Usage errors: click prints them with its own code (2 for misuse); a JSON reader
            # still gets its one object.
            if wants_json(kwargs):
                _print_json_error(exc, _plain(exc.format_message()), exc.exit_code)
            raise
        except (click.exceptions.Exit, click.exceptions.Abort):
            raise
        except Exception as exc:  # a bug: exit 3 (never 1, "gate failed"), one line, the traceback in a file
            path = crash_log(exc)
            what = _plain(" ".join(f"{type(exc).__name__}: {exc}".splitlines()))[:300]
            where = f"the traceback is in {path}" if path is not None else "the traceback could not be saved"
            print(f"rubric-gate: internal error (a bug, please report it): {what}; {where}", file=sys.stderr)
            if wants_json(kwargs):
                _print_json_error(exc, f"internal error (a bug): {what}; {where}", EXIT_CRASH)
            return EXIT_CRASH

    return wrapper
