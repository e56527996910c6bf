"""`rubric-gate check-staged`: the pre-commit hook that gates staged rubric edits offline.

Each staged rubric (its content in the git index, as it will be committed) is gated against
its copy at `--base-ref` (default origin/main) with recorded verdicts only: the gate's answer
before the push, without a judge or network. Calibration and verdict files are read from the
work tree: under pre-commit, which stashes unstaged changes first, that is what is staged.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import click
from rich.text import Text

from rubric_gate.cli.common import repo_root, stdout_console
from rubric_gate.cli.errors import handle_errors
from rubric_gate.cli.hook_paths import rubrics_for_hook
from rubric_gate.errors import (
    EXIT_GATE_FAILED,
    EXIT_PASS,
    InputError,
    MissingVerdictsError,
    RubricGateError,
)
from rubric_gate.report import render_check_text
from rubric_gate.report.terminal import strip_controls
from rubric_gate.rubric import parse_rubric_text
from rubric_gate.rubric.load import git_siblings
from rubric_gate.scoring import VerdictLookup, load_calibration_for, load_verdicts_for, run_check
from rubric_gate.sources.files import read_git_file


def _in_ref(ref: str, path: str, root: Path) -> bool:
    proc = subprocess.run(["git", "cat-file", "-e", f"{ref}:{path}"], cwd=root, capture_output=True, check=False)
    return proc.returncode == 0


def _ref_exists(ref: str, root: Path) -> bool:
    proc = subprocess.run(["git", "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}"], cwd=root,
                          capture_output=True, check=False)
    return proc.returncode == 0


def _gate_one(path: str, base_ref: str, root: Path) -> int:
    console = stdout_console()
    if not _in_ref("", path, root):
        console.print(Text(f"{path}: not staged, skipped"))
        return EXIT_PASS
    head = parse_rubric_text(read_git_file("", path, root), f"{path} (staged)", repo_path=path,
                             siblings=git_siblings("", root))
    if not _in_ref(base_ref, path, root):
        console.print(Text(f"{path}: new rubric (not in {base_ref}): nothing to gate"))
        return EXIT_PASS
    base = parse_rubric_text(read_git_file(base_ref, path, root), f"{base_ref}:{path}", repo_path=path,
                             siblings=git_siblings(base_ref, root))
    items = load_calibration_for(head, None, root)
    store = load_verdicts_for([base, head], None, root, replay=True)
    report = run_check(base, head, VerdictLookup(items, store, head.rubric))
    console.print(Text(f"== {path} against {base_ref}"))
    render_check_text(report, console)
    return EXIT_PASS if report.decision == "pass" else EXIT_GATE_FAILED


@click.command("check-staged")
@click.argument("files", nargs=-1)
@click.option("--base-ref", default="origin/main", show_default=True, help="Git ref holding the base rubrics.")
@handle_errors
def check_staged_command(files: tuple[str, ...], base_ref: str) -> int:
    """Gate the staged version of each rubric FILE against BASE-REF, replaying recorded verdicts.

    FILES are paths relative to the repository root, as pre-commit passes them. Exit 0 pass,
    1 gate failed, 2 bad input or verdicts still to record.
    """
    inside = subprocess.run(["git", "rev-parse", "--is-inside-work-tree"], capture_output=True, text=True, check=False)
    if inside.returncode != 0 or inside.stdout.strip() != "true":
        raise InputError(str(Path.cwd()), "not a git repository (check-staged gates the rubrics staged in one: "
                                          "run it, or `git commit` with the hook, inside the repository)")
    root = repo_root()
    if not _ref_exists(base_ref, root):
        remote = base_ref.split("/", 1)[0] if "/" in base_ref else None
        has_remote = remote is not None and subprocess.run(["git", "remote", "get-url", remote], cwd=root,
                                                           capture_output=True, check=False).returncode == 0
        hint = (f"run `git fetch {remote}` or pass --base-ref" if has_remote or remote is None else
                f"this repository has no remote `{remote}`: pass --base-ref main (in .pre-commit-config.yaml: "
                "`args: [--base-ref, main]`)")
        raise InputError(base_ref, f"no such git ref ({hint})")
    worst = EXIT_PASS
    relative = [Path(p).resolve().relative_to(root.resolve()).as_posix() if Path(p).is_absolute() else p
                for p in files]
    for path in rubrics_for_hook(relative, root):
        try:
            code = _gate_one(path, base_ref, root)
        except MissingVerdictsError as exc:
            # check-staged replays only: say how to record them, not an option it does not take.
            message = " ".join(exc.message.splitlines()).replace(
                "record verdicts or pass --judge PROVIDER:MODEL to judge them",
                f"record them first (rubric-gate judge --rubric {path} --verdicts VERDICT_FILE --judge "
                "PROVIDER:MODEL), then stage the verdict file")
            print(f"rubric-gate: error: {strip_controls(message)}", file=sys.stderr)
            code = exc.exit_code
        except RubricGateError as exc:
            print(f"rubric-gate: error: {strip_controls(' '.join(exc.message.splitlines()))}", file=sys.stderr)
            code = exc.exit_code
        worst = max(worst, code)  # 2 (bad input) > 1 (gate failed) > 0
    return worst
