"""Entry point: a click group whose commands each return an exit code.

Commands load on first use: `--version` and `--help` import click and nothing else of ours, and
a command imports only what it uses. Ctrl-C at any moment (imports included) prints one line and
exits 130.
"""

from __future__ import annotations

import sys
from typing import Any

from rubric_gate.cli import interrupts

EXIT_INTERRUPTED = 130

# One entry per command, in `--help` order: (name, "module:attribute", the one-line summary
# `--help` shows without importing the module; a test keeps it equal to the command's own).
COMMAND_MODULES: tuple[tuple[str, str, str], ...] = (
    ("check", "rubric_gate.cli.check_cmd:check_command",
     "Gate every change from BASE to HEAD."),
    ("check-staged", "rubric_gate.cli.check_staged_cmd:check_staged_command",
     "Gate the staged version of each rubric FILE against BASE-REF, replaying recorded verdicts."),
    ("attribute", "rubric_gate.cli.attribute_cmd:attribute_command",
     "Print RUBRIC's per-check attribution and rates on its calibration set."),
    ("judge", "rubric_gate.cli.judge_cmd:judge_command",
     "Judge every pair missing from VERDICTS for the given rubrics."),
    ("audit", "rubric_gate.cli.audit_cmd:audit_command",
     "Audit each check of RUBRIC (or the named ones): the five structural properties and grounding in the task."),
    ("lint", "rubric_gate.cli.lint_cmd:lint_command",
     "Check rubric FILES without judging: schema, model rules, calibration, verdict coverage."),
    ("init", "rubric_gate.cli.init_cmd:init_command",
     "Scaffold rubrics/NAME.yaml, calibration/NAME.jsonl and .github/workflows/rubric-gate.yml."),
    ("preview", "rubric_gate.cli.preview_cmd:preview_command",
     "Run the action's gate on this repository, as for a PR from HEAD into BASE, without GitHub."),
    ("action", "rubric_gate.cli.action_cmd:action_command",
     "Gate a pull request's rubric edits (run by the GitHub Action; reads GITHUB_* and INPUT_* variables)."),
    ("teach", "rubric_gate.cli.teach_cmd:teach_command",
     "Write a check for each group of flawed items RUBRIC misses and keep those the gate would accept "
     "as additions (origin: label, so frozen)."),
    ("discover", "rubric_gate.cli.discover_cmd:discover_command",
     "Discover a rubric from preference pairs and write it to OUT (origin: generated)."),
    ("export", "rubric_gate.cli.export_cmd:export_command",
     "Write RUBRIC's checks for another eval tool, on stdout."),
    ("history", "rubric_gate.cli.history_cmd:history_command",
     "Score every committed revision of RUBRIC (following renames) and replay the gate step by step."),
    ("drift", "rubric_gate.cli.drift_cmd:drift_command",
     "Ask each RUBRIC's judge again on a sample of its stored verdicts; exit 1 if it drifted."),
)


def _interrupted() -> int:
    print("rubric-gate: interrupted", file=sys.stderr)
    return EXIT_INTERRUPTED


def _build_cli() -> Any:
    import click

    from rubric_gate import __version__
    from rubric_gate.cli.lazy_group import LazyGroup

    @click.group(cls=LazyGroup, lazy_commands=COMMAND_MODULES,
                 context_settings={"help_option_names": ["-h", "--help"]})
    @click.version_option(__version__, prog_name="rubric-gate")
    def cli() -> None:
        """Change control for checklist rubrics graded by LLM judges."""

    return cli


_CLI: Any = None


def __getattr__(name: str) -> Any:
    if name == "cli":
        global _CLI
        if _CLI is None:
            _CLI = _build_cli()
        return _CLI
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def main(argv: list[str] | None = None) -> int:
    try:
        import click

        group = __getattr__("cli")
        try:
            result = group.main(args=argv, prog_name="rubric-gate", standalone_mode=False)
        except click.exceptions.Exit as exc:
            return exc.exit_code
        except click.UsageError as exc:
            exc.show()
            return 2
        except click.Abort:
            # click turns Ctrl-C inside a prompt into Abort
            return _interrupted()
        return result if isinstance(result, int) else 0
    except KeyboardInterrupt:
        return _interrupted()


def run() -> None:
    """Console-script entry point."""
    try:
        interrupts.install()  # before any library: a Ctrl-C inside pydantic's core waits for it to return
        import gc
        import os

        gc.disable()  # until the command is imported (`LazyGroup.freeze_imports`)

        # pydantic looks for plugins (entry points of every installed distribution) when the
        # first model is built: 60-70 ms of a 1 s rerun, and no plugin has a part in a gate. Set
        # it to anything else to let them load.
        os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")
        from rubric_gate.cli.lazy_group import LazyGroup
        from rubric_gate.cli.pydantic_plugins import stand_in_while_off

        stand_in_while_off()  # and its loader's import of importlib.metadata (60 ms)
        LazyGroup.freeze_imports = True  # a process of its own: what the command imports lives as long
        code = main()
        sys.stdout.flush()
    except KeyboardInterrupt:
        code = _interrupted()
    except BaseException as exc:
        # After a Ctrl-C, whatever a library made of it (a Rust panic is a BaseException) ends
        # with the same one line.
        if isinstance(exc, SystemExit) or not interrupts.STATE.received:
            raise
        code = _interrupted()
    import signal

    # The command is over: a Ctrl-C while the interpreter shuts down (threads joined, files
    # closed) ends it with the same one line instead of a traceback from a library's cleanup.
    signal.signal(signal.SIGINT, _exit_interrupted)
    if interrupts.settle() and code != EXIT_INTERRUPTED:  # it arrived inside pydantic; the command ended first
        code = _interrupted()
    _leave(code)


def _leave(code: int) -> None:
    """Exit with `code` as the interpreter would, without its teardown: at-exit handlers run
    and the standard streams are flushed, but freeing every object and module one by one (a
    tenth of a rerun of `check`) is left to the process's end. With another thread still
    running, or a stream that does not flush, the ordinary exit (which joins and reports)."""
    import atexit
    import os
    import threading

    if threading.active_count() > 1:
        sys.exit(code)
    atexit._run_exitfuncs()
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        sys.exit(code)
    os._exit(code)


def _exit_interrupted(signum: int, frame: object) -> None:
    import os

    _interrupted()
    sys.stderr.flush()
    os._exit(EXIT_INTERRUPTED)


if __name__ == "__main__":
    run()
