"""Gate the local branch as the action gates a pull request from it, and keep what it would post.

Only git facts are gathered here (the commits, their merge base, the changed files); the gate
itself is the action's (`gate_changes` and `run_decision`), so the preview cannot drift from it.
What a runner adds and a laptop lacks (the override label, a GitHub token, model keys unless
`--judge` is given) is left out and said in `Preview.differences`.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from rubric_gate.action.cache.verdict_cache import VerdictCache
from rubric_gate.action.commits.changed import changed_via_git, merge_base_via_git
from rubric_gate.action.commits.sources import GitReader
from rubric_gate.action.commits.workspace import tracked_under
from rubric_gate.action.config import load_config
from rubric_gate.action.decide import exit_code, run_decision
from rubric_gate.action.event import PullRequest
from rubric_gate.action.gating.judging import SECRET_VARIABLES
from rubric_gate.action.gating.pull_request import gate_changes
from rubric_gate.action.github.outputs import command, commands_to
from rubric_gate.action.github.publish import write_report
from rubric_gate.action.render import RunSummary, fit, render_body
from rubric_gate.errors import InputError
from rubric_gate.preview.workflow import placeholder_uses, workflow_inputs
from rubric_gate.report.terminal import strip_controls
from rubric_gate.service import CallBudget

DEFAULT_OUT = Path(".rubric-gate/preview")
EXIT_MEANINGS = {0: "pass", 1: "gate failed", 2: "bad input"}
JUDGE_FAILED = "a judge left pairs without a valid answer, none guessed"
# The kind `echo` gets for a change the gate rejects, in `check`'s word for it: a rejection is
# the gate's answer, not an input error (`error` means bad input, exit 2).
REJECTED = "REJECTED"


@dataclass
class Preview:
    summary: RunSummary
    exit_code: int  # what the action would exit with
    comment: str  # the Markdown the action would post as its PR comment
    base_ref: str
    base_sha: str  # the base branch's tip
    merge_base: str  # what the PR is gated against
    head_sha: str
    workflow: str | None  # the workflow the inputs came from
    written: list[Path] = field(default_factory=list)
    differences: list[str] = field(default_factory=list)  # how this run differs from the action's
    warnings: list[str] = field(default_factory=list)  # what stops the action running on GitHub at all

    @property
    def meaning(self) -> str:
        """What the exit code says: exit 2 from a judge that could not answer is not bad input."""
        errors = [o for o in self.summary.outcomes if o.error is not None]
        if self.exit_code == 2 and errors and all(o.judge_failed for o in errors):
            return JUDGE_FAILED
        return EXIT_MEANINGS.get(self.exit_code, "")


def _git(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=False)


def _commit(root: Path, ref: str, option: str) -> str:
    proc = _git(root, "rev-parse", "--verify", "--quiet", "--end-of-options", f"{ref}^{{commit}}")
    if proc.returncode != 0 or not proc.stdout.strip():
        if not _git(root, "rev-list", "-n", "1", "--all").stdout.strip():
            raise InputError(f"{option} {ref}", "this repository has no commits yet: commit your rubric, its "
                             "calibration set and verdicts on main, then edit the rubric on a branch and preview that")
        branches = _git(root, "for-each-ref", "--format=%(refname:short)", "refs/heads", "refs/remotes").stdout.split()
        hint = ("the branch your PR will target" if option == "--base" else "a branch or commit, e.g. HEAD")
        shown = ", ".join(b for b in branches[:8] if not b.endswith("/HEAD"))
        raise InputError(f"{option} {ref}", f"no such branch or commit in this repository ({hint}; branches "
                         f"here: {shown})")
    return proc.stdout.strip()


def repository_root(start: Path) -> Path:
    proc = _git(start, "rev-parse", "--show-toplevel")
    if proc.returncode != 0 or not proc.stdout.strip():
        raise InputError(start, "not a git repository: the preview gates commits, so run it inside a clone "
                         "of your repository (`git init` first for a new one)")
    return Path(proc.stdout.strip())


def _uncommitted(root: Path) -> list[str]:
    proc = _git(root, "status", "--porcelain", "--untracked-files=normal")
    paths = [line[3:] for line in proc.stdout.splitlines() if len(line) > 3]
    return [p for p in paths if not p.startswith(".rubric-gate/")]


@contextmanager
def _no_model_keys() -> Iterator[None]:
    """Offline: no provider key is visible while the gate runs, so nothing can call a model."""
    saved = {name: os.environ.pop(name) for name in SECRET_VARIABLES if name in os.environ}
    try:
        yield
    finally:
        os.environ.update(saved)


def _check_output(root: Path, out: Path) -> None:
    inside = out.resolve().relative_to(root.resolve()) if out.resolve().is_relative_to(root.resolve()) else None
    if inside is None:
        return
    if inside == Path("."):
        raise InputError(f"--out {out}", "must be a directory of its own, not the repository root")
    tracked = tracked_under(root, inside)
    if tracked:  # never overwrite a file the repository keeps
        raise InputError(f"--out {inside}", f"holds files the repository tracks ({', '.join(tracked[:3])}): "
                         "choose another directory")


def _prepare_out(root: Path, out: Path) -> None:
    own = root / ".rubric-gate"
    ignore = own / ".gitignore"
    if out.resolve().is_relative_to(own.resolve()) and not ignore.exists() and not tracked_under(root, Path(own.name)):
        own.mkdir(parents=True, exist_ok=True)
        # As .pytest_cache does: git ignores the whole directory, so a `git add -A` cannot
        # commit the preview's files (the action refuses a PR that tracks files there).
        ignore.write_text("# written by rubric-gate preview\n*\n", encoding="utf-8")
    out.mkdir(parents=True, exist_ok=True)


def run_preview(start: Path, base_ref: str = "main", head_ref: str = "HEAD", *, workflow: Path | None = None,
                judges: tuple[str, ...] = (), out: Path | None = None,
                echo: Callable[[str, str], None] = lambda kind, message: None) -> Preview:
    """Gate `head_ref` against `base_ref` as the action gates a PR from that branch to that base.

    `judges` given: they judge what is missing, as the action's `judge` input would (that calls
    the provider's API); else recorded verdicts are replayed and no key is read.
    """
    root = repository_root(start)
    base_sha, head_sha = _commit(root, base_ref, "--base"), _commit(root, head_ref, "--head")
    found = workflow_inputs(root, workflow)
    out = root / DEFAULT_OUT if out is None else (start / out).resolve()  # --out: from where it was typed
    _check_output(root, out)
    env = {f"INPUT_{name.upper()}": value for name, value in found.inputs.items()}
    configured = env.pop("INPUT_JUDGE", "")
    if judges:
        env["INPUT_JUDGE"] = ",".join(judges)
    env.update({
        "GITHUB_EVENT_NAME": "pull_request", "GITHUB_EVENT_PATH": str(out / "event.json"),
        "GITHUB_REPOSITORY": "local/preview", "GITHUB_WORKSPACE": str(root),
        "INPUT_OUTPUT_DIR": str(out), "INPUT_VERDICT_CACHE": str(root / ".rubric-gate" / "cache"),
    })
    config = load_config(env)
    differences = _differences(root, found.skipped, configured, judges, head_ref, head_sha)
    merge_base = merge_base_via_git(root, base_sha, head_sha)
    if _git(root, "merge-base", "--is-ancestor", merge_base, head_sha).returncode != 0:
        raise InputError(f"--head {head_ref}", f"shares no history with --base {base_ref}")
    files = changed_via_git(root, merge_base, head_sha)
    source = f"inputs from {found.path}" if found.path else "the action's default inputs (no workflow uses it)"
    echo("", f"a PR from {head_ref} ({head_sha[:7]}) into {base_ref} ({base_sha[:7]}), gated against their merge "
             f"base {merge_base[:7]}; {source}")
    for difference in differences:
        echo("", f"not as on GitHub: {difference}")
    warnings = placeholder_uses(root)
    for warning in warnings:
        echo("warning", warning)
    pr = PullRequest(number=0, base_sha=base_sha, head_sha=head_sha, base_repo="local", head_repo="local",
                     labels=(), html_url="")
    notices: list[str] = []
    with commands_to(echo), (_no_model_keys() if not judges else _nothing()):
        cache = VerdictCache(config.cache_dir)
        for warning in cache.warnings:
            command("warning", warning)
        gated = gate_changes(config, pr, GitReader(root), files, merge_base, cache,
                             CallBudget(config.max_judge_calls), notices, rubric_judges=bool(judges))
        for finding in gated.standard:  # the action annotates a blocking one as an error; here it is said as check says it
            line = strip_controls(f"{finding.path}: {finding.message}")
            if finding.blocking:
                echo(REJECTED, line)
            else:
                command("notice", line)
    summary = RunSummary("pass", gated.outcomes, head_sha, merge_base, base_branch_sha=base_sha,
                         standard=gated.standard, notices=notices, override_label=config.override_label)
    errors = any(o.error is not None for o in gated.outcomes)
    # No override is read here, and no other PR shares this head.
    summary.decision = run_decision(failing=bool(gated.failing), errors=errors, overridden=False,
                                    pending=any(o.pending for o in gated.outcomes), failing_elsewhere=False)
    code = exit_code(config.fail_on, summary.decision, errors)
    _prepare_out(root, out)
    report = write_report(config, pr, summary, "git", gated.differences)
    comment = fit(render_body(summary), where="report.json")
    (out / "comment.md").write_text(comment, encoding="utf-8")
    (out / "event.json").unlink(missing_ok=True)
    written = [out / "comment.md", report] + ([out / "report.html"] if (out / "report.html").exists() else [])
    (out / "preview.json").write_text(json.dumps({"base": base_ref, "base_sha": base_sha, "merge_base": merge_base,
                                                  "head_sha": head_sha, "exit_code": code}) + "\n", encoding="utf-8")
    return Preview(summary, code, comment, base_ref, base_sha, merge_base, head_sha, found.path, written, differences,
                   warnings)


@contextmanager
def _nothing() -> Iterator[None]:
    yield


def _differences(root: Path, skipped: list[str], configured: str, judges: tuple[str, ...], head_ref: str,
                 head_sha: str) -> list[str]:
    notes = []
    if not judges:
        what = f"the workflow's judge `{configured}` was not called" if configured else "no judge was called"
        notes.append(f"offline: {what}, recorded verdicts were replayed (--judge PROVIDER:MODEL judges what is "
                     "missing, as the action does, through the provider's API)")
    if skipped:
        notes.append(f"the workflow sets {', '.join(skipped)} by an expression only a runner evaluates: "
                     "the action's default was used")
    notes.append("no override label is read (the action honours one applied on GitHub by a writer)")
    notes.append("no approval is read: the PR's own recorded verdicts are held as on GitHub before someone with "
                 "write access approves the PR's head")
    dirty = _uncommitted(root)
    if dirty and head_ref == "HEAD":
        shown = ", ".join(dirty[:3]) + (f" and {len(dirty) - 3} more" if len(dirty) > 3 else "")
        notes.append(f"uncommitted changes are not gated ({shown}): like the action, the preview gates commits "
                     f"(HEAD {head_sha[:7]}); commit them to include them")
    return notes
