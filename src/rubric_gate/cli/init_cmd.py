"""`rubric-gate init`: scaffold a rubric, a calibration template and the workflow."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import click

from rubric_gate.cli.errors import handle_errors
from rubric_gate.errors import EXIT_PASS, InputError
from rubric_gate.scaffold import next_steps, scaffold_files, write_new_files
from rubric_gate.scaffold.plan import DEFAULT_ACTION


def _git_root() -> Path:
    proc = subprocess.run(["git", "rev-parse", "--show-toplevel"], capture_output=True, text=True, check=False)
    if proc.returncode != 0 or not proc.stdout.strip():
        raise InputError(str(Path.cwd()), "not inside a git repository (run `git init` first)")
    return Path(proc.stdout.strip())


def _default_name(root: Path) -> str:
    slug = re.sub(r"[^A-Za-z0-9_.-]+", "-", root.name).strip("-._")
    return slug or "rubric"


@click.command("init")
@click.option("--name", help="Rubric name (file names and id). Default: the repository's directory name.")
@click.option("--action", "action", default=DEFAULT_ACTION, show_default=True,
              help="The action the workflow uses, OWNER/REPO@REF.")
@click.option("--drift", is_flag=True, help="Also write .github/workflows/rubric-gate-drift.yml: each rubric's judge "
                                            "asked again weekly on a sample of its stored verdicts (`rubric-gate drift`).")
@handle_errors
def init_command(name: str | None, action: str, drift: bool = False) -> int:
    """Scaffold rubrics/NAME.yaml, calibration/NAME.jsonl and .github/workflows/rubric-gate.yml.

    Never overwrites a file: existing ones are skipped and listed.
    """
    root = _git_root()
    name = name or _default_name(root)
    try:
        files = scaffold_files(name, action, drift=drift)
    except ValueError as exc:
        raise InputError("--name", str(exc)) from None
    created, skipped = write_new_files(root, files)
    for path in created:
        click.echo(f"created {path}")
    for path in skipped:
        click.echo(f"skipped {path} (already exists, left unchanged)")
    click.echo("\nNext steps:")
    for number, step in enumerate(next_steps(name, action, created), start=1):
        click.echo(f"  {number}. {step}")
    return EXIT_PASS
