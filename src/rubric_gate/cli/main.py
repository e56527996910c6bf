"""Entry point: a click group whose commands each return an exit code."""

from __future__ import annotations

import importlib
import sys

import click

from rubric_gate import __version__

# Each module defines one command; listed here so `--help` shows them in this order.
COMMAND_MODULES = (
    ("rubric_gate.cli.check_cmd", "check_command"),
    ("rubric_gate.cli.attribute_cmd", "attribute_command"),
    ("rubric_gate.cli.judge_cmd", "judge_command"),
    ("rubric_gate.cli.audit_cmd", "audit_command"),
    ("rubric_gate.cli.action_cmd", "action_command"),
    ("rubric_gate.cli.lint_cmd", "lint_command"),
    ("rubric_gate.cli.check_staged_cmd", "check_staged_command"),
    ("rubric_gate.cli.init_cmd", "init_command"),
    ("rubric_gate.cli.teach_cmd", "teach_command"),
    ("rubric_gate.cli.discover_cmd", "discover_command"),
    ("rubric_gate.cli.history_cmd", "history_command"),
)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="rubric-gate")
def cli() -> None:
    """Change control for checklist rubrics graded by LLM judges."""


for module_name, attr in COMMAND_MODULES:
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name != module_name:
            raise
        continue
    cli.add_command(getattr(module, attr))


def main(argv: list[str] | None = None) -> int:
    try:
        result = cli.main(args=argv, prog_name="rubric-gate", standalone_mode=False)
    except click.exceptions.Exit as exc:
        return exc.exit_code
    except click.UsageError as exc:
        exc.show()
        return 2
    except click.Abort:
        print("rubric-gate: aborted", file=sys.stderr)
        return 130
    return result if isinstance(result, int) else 0


def run() -> None:
    """Console-script entry point."""
    sys.exit(main())


if __name__ == "__main__":
    run()
