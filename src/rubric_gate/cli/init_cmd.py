"""`rubric-gate init`: scaffold a rubric, a calibration template and the workflow."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import click

from rubric_gate.cli.common import output_width, wrap_message
from rubric_gate.cli.errors import handle_errors
from rubric_gate.errors import EXIT_PASS, InputError
from rubric_gate.scaffold import next_steps, scaffold_files, write_new_files
from rubric_gate.scaffold.plan import (
    DEFAULT_ACTION,
    DRIFT_WORKFLOW_PATH,
    WORKFLOW_PATH,
    check_action,
)
from rubric_gate.scaffold.uses import (
    UsesRefused,
    UsesUpdate,
    names_placeholder,
    set_action,
    set_install,
)


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
              help="Your copy of the action, OWNER/REPO@REF: written into the workflow, or set in the "
                   "`uses:` line of the workflow init wrote before.")
@click.option("--from", "source", nargs=2, metavar="promptfoo PATH",
              help="Gate an existing promptfoo config in place: its llm-rubric assertions are the checks.")
@click.option("--drift", is_flag=True, help="Also write .github/workflows/rubric-gate-drift.yml: each rubric's judge "
                                            "asked again weekly on a sample of its stored verdicts (`rubric-gate drift`).")
@handle_errors
def init_command(name: str | None, action: str, source: tuple[str, str] | None = None, drift: bool = False) -> int:
    """Scaffold rubrics/NAME.yaml, calibration/NAME.jsonl and .github/workflows/rubric-gate.yml.

    Never overwrites a file: existing ones are skipped and listed. With --action, the `uses:`
    line of an existing rubric-gate workflow's gate step is set to it (only that line), and no
    rubric is scaffolded unless --name asks for one.
    """
    root = _git_root()
    if source is not None:
        return _init_from_promptfoo(root, source, name, action)
    workflow = root / WORKFLOW_PATH
    # `init --action` once the workflow exists points the workflows at your copy and scaffolds no
    # rubric: one named after the directory would land beside yours (or beside a promptfoo config).
    only_workflows = name is None and action != DEFAULT_ACTION and workflow.is_file()
    name = name or _default_name(root)
    try:
        files = scaffold_files(name, action, drift=drift)
        if action != DEFAULT_ACTION:
            check_action(action)
    except ValueError as exc:
        option = "--name" if "rubric name" in str(exc) else "--action"
        raise InputError(option, str(exc)) from None
    if only_workflows:
        files = [f for f in files if f.path.startswith(".github/")]
    update = _planned_update(workflow, action)  # refused before anything is written
    drift_workflow = root / DRIFT_WORKFLOW_PATH
    drift_update = _planned_install(drift_workflow, action)
    created, skipped = write_new_files(root, files)
    if update is not None and update.changed:
        _replace(workflow, update.text)
    if drift_update is not None and drift_update.changed and DRIFT_WORKFLOW_PATH not in created:
        _replace(drift_workflow, drift_update.text)
    _list(created, skipped, update, action)
    if drift_update is not None and DRIFT_WORKFLOW_PATH not in created:
        for line, before in zip(drift_update.lines, drift_update.before, strict=True):
            _say(f"updated {DRIFT_WORKFLOW_PATH}:{line}: installs rubric-gate from {action} (was {before})")
    placeholder = workflow.is_file() and bool(names_placeholder(workflow.read_text(encoding="utf-8", errors="replace")))
    _echo_steps(next_steps(name, action, created, placeholder, rubric=not only_workflows))
    return EXIT_PASS


def _echo_steps(steps: list[str]) -> None:
    """The numbered next steps, each wrapped to the terminal with a hanging indent (whole lines in
    a pipe); the lines after a step's first (a YAML entry to paste) print as they are."""
    width = output_width()
    click.echo("\nNext steps:")
    for number, step in enumerate(steps, start=1):
        first, *rest = step.split("\n")
        click.echo(wrap_message(f"  {number}. {first}", width, indent="     "))
        for line in rest:
            click.echo(line)


def _planned_update(workflow: Path, action: str) -> UsesUpdate | None:
    """The existing workflow with its rubric-gate step pointed at `action` (None: nothing to
    update, no workflow yet or no action given). InputError naming the line when it cannot be."""
    if action == DEFAULT_ACTION or not workflow.is_file():
        return None
    try:
        text = workflow.read_bytes().decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(WORKFLOW_PATH, f"cannot read the workflow to set its `uses:` ({exc})") from None
    try:
        return set_action(text, action)
    except UsesRefused as refused:
        raise InputError(WORKFLOW_PATH, f"{refused.message}; init changed nothing", refused.line) from None


def _planned_install(workflow: Path, action: str) -> UsesUpdate | None:
    """The drift workflow (when there is one) installing rubric-gate from `action`'s repository
    and ref; a drift workflow that installs it otherwise is left as it is."""
    if action == DEFAULT_ACTION or not workflow.is_file():
        return None
    try:
        return set_install(workflow.read_bytes().decode("utf-8"), action)
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(DRIFT_WORKFLOW_PATH, f"cannot read the workflow to set what it installs ({exc})") from None


def _replace(path: Path, text: str) -> None:
    """Write `text` over `path` whole or not at all (a temporary file renamed over it)."""
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(handle, "w", encoding="utf-8", newline="") as out:
            out.write(text)
        shutil.copymode(path, temporary)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def _say(text: str) -> None:
    """One line of init's report: wrapped to the terminal, whole in a pipe."""
    click.echo(wrap_message(text, output_width()))


def _list(created: list[str], skipped: list[str], update: UsesUpdate | None = None, action: str = "") -> None:
    for path in created:
        click.echo(f"created {path}")
    for path in skipped:
        if path == WORKFLOW_PATH and update is not None and update.changed:
            for line, before in zip(update.lines, update.before, strict=True):
                _say(f"updated {path}:{line}: uses: {action} (was {before}); nothing else in it changed")
        elif path == WORKFLOW_PATH and update is not None:
            _say(f"skipped {path} (already exists and uses {action})")
        else:
            _say(f"skipped {path} (already exists, left unchanged)")


def _init_from_promptfoo(root: Path, source: tuple[str, str], name: str | None, action: str) -> int:
    from rubric_gate.rubric.mapping import MAPPING_FILE
    from rubric_gate.rubric.promptfoo import looks_like_promptfoo, read_checklist
    from rubric_gate.scaffold.plan import NAME_PATTERN
    from rubric_gate.scaffold.promptfoo import default_name, promptfoo_files, settings_entry
    from rubric_gate.sources import load_located_yaml, read_source

    kind, given = source
    if kind != "promptfoo":
        raise InputError("--from", f"unknown source {kind!r}: the one known is `promptfoo PATH`")
    path = Path(given).resolve()
    if not path.is_relative_to(root.resolve()):
        raise InputError(given, f"not inside this repository ({root})")
    config = path.relative_to(root.resolve()).as_posix()
    text = read_source(path).text
    located = load_located_yaml(text, given)
    if not looks_like_promptfoo(located.data):
        raise InputError(given, "not a promptfoo config (no prompts, providers, tests or defaultTest)", 1)
    checklist = read_checklist(located, given)
    if not checklist.assertions:
        raise InputError(given, "no llm-rubric assertion to gate (defaultTest and the inline tests carry none)", 1)
    name = name or default_name(config)
    if not NAME_PATTERN.match(name):
        raise InputError("--name", f"rubric name {name!r} must use letters, digits, '_', '.', '-'")
    files, items, with_output = promptfoo_files(config, name, located, checklist, action)
    created, skipped = write_new_files(root, files)
    _list(created, skipped)
    count = len(checklist.assertions)
    click.echo()
    _say(f"{config}: {count} llm-rubric assertion{'s' * (count != 1)} gated as checks "
         f"({', '.join(a.id for a in checklist.assertions)}); not gated: "
         + (", ".join(n.describe() for n in checklist.not_gated) or "nothing else"))
    steps = []
    if MAPPING_FILE in skipped:
        steps.append(f"{MAPPING_FILE} exists: add this entry under its `promptfoo:` section:\n"
                     + settings_entry(config, name, checklist).split("\n", 1)[1].rstrip())
    steps.append(f"calibration/{name}.jsonl has {items} item{'s' * (items != 1)} from the config's tests "
                 f"({with_output} with an output): record each output and label it pass or fail; add more "
                 "(30-50 correct and 30-50 flawed outputs)")
    steps.append(f"Record verdicts: rubric-gate judge --rubric {config} --verdicts calibration/{name}.verdicts.jsonl "
                 "--judge PROVIDER:MODEL; rubric-gate lint " + config + " lists what is missing.")
    steps.append(f"If you use rubric-gate's pre-commit hooks, add `{config}` to their `files:` pattern in "
                 ".pre-commit-config.yaml.")
    steps.append(("Point the workflow at your copy of the action (fork this repository, then rubric-gate init "
                  "--action you/rubric-gate@<commit sha>), commit" if action == DEFAULT_ACTION else "Commit")
                 + ", push, and require the rubric-gate check; then edit the config on a branch and run "
                 "rubric-gate preview --base main.")
    _echo_steps(steps)
    return EXIT_PASS
