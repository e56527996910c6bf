"""`rubric-gate lint`: check rubric files offline, listing every finding."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from rubric_gate.cli.common import repo_root
from rubric_gate.cli.errors import handle_errors
from rubric_gate.cli.hook_paths import RUBRIC_SUFFIXES, rubrics_for_hook
from rubric_gate.lint import ERROR, WARNING, exit_code, lint_rubric_files
from rubric_gate.rubric.mapping import MAPPING_FILE


@click.command("lint")
@click.argument("files", nargs=-1, required=True)
@click.option("--strict", is_flag=True, help="Exit 1 when there are warnings (e.g. verdicts still to record).")
@click.option("--root", type=click.Path(file_okay=False, path_type=Path), help="Repository root for rubric paths.")
@handle_errors
def lint_command(files: tuple[str, ...], strict: bool, root: Path | None) -> int:
    """Check rubric FILES without judging: schema, model rules, calibration, verdict coverage.

    Prints one `file:line: severity: message` line per finding. Exit 0 clean (or warnings
    only), 1 warnings with --strict, 2 errors.
    """
    root = root or repo_root()
    # a calibration set or verdict file, or the settings naming promptfoo configs (the hook)
    if any(not f.endswith(RUBRIC_SUFFIXES) or Path(f).name == MAPPING_FILE for f in files):
        files = tuple(rubrics_for_hook(files, root))
    findings = lint_rubric_files(files, root)
    for finding in findings:
        print(finding.format())
    errors = sum(f.severity == ERROR for f in findings)
    warnings = sum(f.severity == WARNING for f in findings)
    if findings:
        print(f"rubric-gate lint: {errors} error{'s' * (errors != 1)}, {warnings} warning{'s' * (warnings != 1)} "
              f"in {len(files)} file{'s' * (len(files) != 1)}", file=sys.stderr)
    else:  # silence reads as "did it run?": say what was checked
        print(f"rubric-gate lint: {len(files)} rubric file{'s' * (len(files) != 1)} clean (schema, checks, "
              "calibration set, verdict coverage)", file=sys.stderr)
    return exit_code(findings, strict=strict)
