"""Gate the merge, not the branch: the merge that will land must be the one the gate reviewed.

The gate reviews a model of the merge: the PR's changes since one merge base, each file as the
head has it, every other file as the base tip has it, and a rubric both sides changed as the
PR's check changes applied onto the tip's (`trust.apply_check_changes`). The merge itself is
written by git: with history, `git merge-tree --write-tree` in the checkout; without it (a
shallow checkout read through the REST API), GitHub's own test merge commit of the PR
(`merge_commit_sha`, the `refs/pull/N/merge` commit a `pull_request` workflow checks out).

Either tree is compared with the model, file by file, for every fact the gate reads: each rubric
under the globs must load there and parse equal to the reviewed one (checks by id, in any
order), and each calibration set and verdict file a rubric names must be there as the gate read
it (a file both sides changed must load: the gate reviewed its merge itself). Where they differ
(a criss-cross history, which git merges from a virtual base the gate never read; a YAML anchor
each side defines, which a text merge turns into a rubric that does not load), or where there is
no merge to compare (conflicts; GitHub has not computed it), the PR fails, naming why: never a
silent skip. A merge queue's `merge_group` head is the merge itself: its base is its parent, so
there is nothing else to compare.
"""

from __future__ import annotations

import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from github import GithubException
from github.Repository import Repository

from rubric_gate.action.commits.changed import ChangedFile
from rubric_gate.action.commits.snapshot import Snapshot, Snapshots
from rubric_gate.action.commits.sources import (
    REGULAR_MODES,
    FileReader,
    GitReader,
    RestReader,
    TreeEntry,
)
from rubric_gate.action.event import PullRequest
from rubric_gate.action.gating.standard import StandardFinding
from rubric_gate.action.github.client import describe
from rubric_gate.errors import InputError
from rubric_gate.rubric import Rubric
from rubric_gate.trust import apply_check_changes, landing_differences, merged_record
from rubric_gate.trust.differences import Difference, Kind, Rule, rule_of
from rubric_gate.tuning import env_int, env_number
from rubric_gate.verdicts.compare import differing_lines

THE_MERGE = "the merge"  # the finding's `path` for what concerns the whole merge, not one file
REBASE = "rebase the PR onto its base branch (or merge the base branch into it) and push"
UNTIL_RESOLVED = ("GitHub will not merge it until they are resolved (a push, gated again), so the gate reviewed "
                  "its own model of the merge (each file's changes since the merge base applied onto the base tip) "
                  f"and has no merge to compare it with; {REBASE.replace(' and push', ' to resolve them')}")
UNSEEN = ("(the merge applies changes no diff from the gate's merge base shows, e.g. from a second merge base of a "
          "criss-cross history)")
FULL_HISTORY = "or check out with history (`fetch-depth: 0`) so that git merges it in the checkout"


# Each a kind of the classified diff's table (`trust.differences`): conflicts are `allowed` (said,
# not blocking: GitHub merges nothing with conflicts), the others `override`.
BASES, MISSING, DIFFERS, CONFLICTS = Kind.MERGE_BASES, Kind.MERGE_MISSING, Kind.MERGE_DIFFERS, Kind.MERGE_CONFLICTS


@dataclass(frozen=True)
class MergeFinding(StandardFinding):
    """A finding on the merge (the path is the file, or THE_MERGE): shown in the comment's own
    section, and in report.json with its kind and rule."""

    kind: str = DIFFERS

    @property
    def rule(self) -> Rule:
        return rule_of(self.kind)

    def to_dict(self) -> dict[str, object]:
        return {**super().to_dict(), "kind": str(self.kind), "rule": self.rule.value}

    def as_difference(self) -> Difference:
        return Difference(self.kind, self.path, self.used_by, self.message)


def _finding(path: str, message: str, kind: str = DIFFERS) -> MergeFinding:
    return MergeFinding(path, (), message, rule_of(kind).needs_override, kind=kind)


@dataclass(frozen=True)
class Merged:
    """A merge to compare with what the gate reviewed: a tree (or commit) the reader can list,
    and how to name it; or why there is none."""

    sha: str | None
    name: str  # "git's merge of the head into the base tip", "GitHub's test merge commit abc1234"
    missing: str | None = None  # why there is no merge to compare (then the PR fails)
    conflicts: bool = False  # there is none because it does not merge as it is (then it is said)


# -- the merge, from git or from GitHub --------------------------------------------------------

def git_merge_bases(workspace: Path, tip_sha: str, head_sha: str) -> list[str]:
    proc = subprocess.run(["git", "merge-base", "--all", tip_sha, head_sha], cwd=workspace, capture_output=True,
                          text=True, check=False)
    return proc.stdout.split() if proc.returncode == 0 else []


def git_merge(workspace: Path, tip_sha: str, head_sha: str) -> Merged:
    """The tree git's merge of the head into the base tip writes (`git merge-tree --write-tree`,
    git 2.38+: exit 0 clean, 1 conflicts)."""
    name = f"git's merge of the head {head_sha[:7]} into the base tip {tip_sha[:7]}"
    proc = subprocess.run(["git", "merge-tree", "--write-tree", "--no-messages", tip_sha, head_sha], cwd=workspace,
                          capture_output=True, check=False)
    if proc.returncode == 1:
        return Merged(None, name, f"{name} has conflicts: {UNTIL_RESOLVED}", conflicts=True)
    if proc.returncode != 0 or not proc.stdout.split():
        why = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        return Merged(None, name, f"git cannot write {name} ({why[-1] if why else 'merge-tree failed'}; "
                      "`git merge-tree --write-tree` needs git 2.38 or later), so the gate cannot check what will "
                      "land: use a newer git on the runner")
    return Merged(proc.stdout.split()[0].decode(), name)


def github_test_merge(repo: Repository, number: int, tip_sha: str, head_sha: str, *,
                      sleep: Callable[[float], None] = time.sleep) -> Merged:
    """GitHub's test merge commit of the PR (`merge_commit_sha` while `mergeable` is true), made
    of the head and the base tip this run gated against; asked again while GitHub computes it
    ("If the value is null, then GitHub has started a background job to compute the
    mergeability", Get a pull request), or while it is one of an older head (a run that starts
    before GitHub made the merge of the push). GitHub makes it with merge-ort, as `git merge`
    does (changelog 2022-09-12), and anew only on a push to the PR, a change of its merge base, or
    once it is 12 hours old (changelog 2026-02-19): one of an older base tip is not the merge
    that lands, and no poll makes it so."""
    polls = env_int("RUBRIC_GATE_MERGE_POLLS", 5, minimum=1)
    wait = env_number("RUBRIC_GATE_MERGE_POLL_SECONDS", 2.0)
    why = ""
    for attempt in range(polls):
        if attempt:
            sleep(wait)
        try:
            data = repo.get_pull(number).raw_data
        except GithubException as exc:
            why = f"the pull request cannot be read through the API ({describe(exc)})"
            continue
        mergeable, sha = data.get("mergeable"), data.get("merge_commit_sha")
        if mergeable is False:
            return Merged(None, "GitHub's test merge", "GitHub reports that the PR does not merge into its base "
                          f"branch without conflicts: {UNTIL_RESOLVED}", conflicts=True)
        if mergeable is None or not isinstance(sha, str) or not sha:
            why = "GitHub has not computed its test merge commit yet (`mergeable` is null)"
            continue
        name = f"GitHub's test merge commit {sha[:7]}"
        try:
            parents = {p.sha for p in repo.get_git_commit(sha).parents}
        except GithubException as exc:
            why = f"{name} cannot be read through the API ({describe(exc)})"
            continue
        if parents != {tip_sha, head_sha}:
            shown = ", ".join(sorted(p[:7] for p in parents)) or "none"
            why = (f"{name} merges {shown}, not the head {head_sha[:7]} and the base tip {tip_sha[:7]} this run gated "
                   "(GitHub makes it anew when the PR's branch is pushed to, when its merge base changes, or once it "
                   "is 12 hours old, not when the base branch merely moves on)")
            continue
        return Merged(sha, name)
    return Merged(None, "GitHub's test merge", f"{why}, so the gate cannot check the merge that will land: re-run "
                  f"the job or push to the PR (e.g. merge its base branch in), {FULL_HISTORY}")


# -- the comparison ------------------------------------------------------------------------------

def merge_problems(snapshots: Snapshots, merged: Merged, rubric_changes: list[ChangedFile],
                   globs: tuple[str, ...]) -> list[MergeFinding]:
    """Where `merged` differs from what the gate reviewed, one problem per file (none: the merge
    that will land is the one reviewed)."""
    if merged.sha is None:
        return [_finding(THE_MERGE, merged.missing or f"{merged.name} cannot be read",
                         CONFLICTS if merged.conflicts else MISSING)]
    tree = Snapshot(snapshots.reader, merged.sha, "merge", snapshots.merge_base.memo)
    landed = _Landing(snapshots, tree, merged.name, rubric_changes)
    problems: list[MergeFinding] = []
    proposed = snapshots.proposed
    rubric_paths = sorted(set(proposed.rubric_paths(globs)) | set(tree.rubric_paths(globs)))
    differing = []  # the rubrics the merge writes other bytes for (or that it models)
    for path in rubric_paths:
        message = landed.rubric_problem(path)
        if message:
            problems.append(_finding(path, message))
        if message is not None or not _same(*landed.listed(path)):
            differing.append(path)
    # Other files only where the merge writes them otherwise, or where both sides changed them:
    # then which of them a rubric names (reading every rubric's keys only when there are any).
    rubric_set = set(rubric_paths)
    candidates = {path for path in set(proposed.paths()) | set(tree.paths())
                  if path not in rubric_set and not _same(*landed.listed(path))}
    candidates |= {f.path for f in snapshots.files if f.path not in rubric_set and landed.both_changed(f)}
    named: dict[str, set[str]] = {}  # path -> the keys naming it: calibration, verdicts
    for snapshot, paths in ((proposed, rubric_paths if candidates else []), (tree, differing)):
        for path in paths:  # a rubric the merge writes as the proposed snapshot has it names the same files
            keys = snapshot.rubric_keys(path)
            for key in ("calibration", "verdicts"):
                if keys.get(key):
                    named.setdefault(keys[key], set()).add(key)
    for path in sorted(set(named) - rubric_set):
        message = landed.file_problem(path, named[path])
        if message:
            problems.append(_finding(path, message))
    return problems


def _same(a: TreeEntry | None, b: TreeEntry | None) -> bool:
    if a is None or b is None:
        return a is b
    return (a.mode, a.blob_id) == (b.mode, b.blob_id)


class _Landing:
    """One merge tree against the reviewed model of it."""

    def __init__(self, snapshots: Snapshots, tree: Snapshot, name: str, rubric_changes: list[ChangedFile]) -> None:
        self.s, self.tree, self.name = snapshots, tree, name
        self.rubrics = {c.path: c for c in rubric_changes}
        self.files = {f.path: f for f in snapshots.files}
        self._listed: dict[str, tuple[TreeEntry | None, TreeEntry | None]] = {}

    def _at(self, sha: str | None, path: str) -> TreeEntry | None:
        """The entry of a path a tree listing gave (already as git lists it: no check needed)."""
        if sha is None:
            return None
        reader = self.s.reader
        if isinstance(reader, (GitReader, RestReader)):
            return reader.tree(sha).get(path)
        return reader.entry(sha, path)

    def listed(self, path: str) -> tuple[TreeEntry | None, TreeEntry | None]:
        """The entries of a path a tree listed (a rubric), in the proposed snapshot and the merge."""
        if path not in self._listed:
            self._listed[path] = (self._at(self.s.proposed.commit_of(path), path), self._at(self.tree.sha, path))
        return self._listed[path]

    def _entries(self, path: str) -> tuple[TreeEntry | None, TreeEntry | None] | None:
        try:
            return self.s.proposed.entry(path), self.tree.entry(path)
        except InputError:
            return None  # a path no file can have: the rubric naming it is an input error where it is gated

    def both_changed(self, change: ChangedFile | None) -> bool:
        """The PR changed the file and the base branch changed it too since the merge base."""
        if change is None or change.status in ("added", "removed") or not self.s.tip_moved:
            return False
        return not _same(self._at(self.s.merge_base.sha, change.base_path), self._at(self.s.tip.sha, change.base_path))

    def rubric_problem(self, path: str) -> str | None:
        at_proposed, at_merge = self.listed(path)
        change = self.rubrics.get(path)
        modeled = self.both_changed(change)
        if not modeled and _same(at_proposed, at_merge):
            return None  # the reviewed file itself lands
        where = f"{self.name} writes `{path}`"
        try:
            reviewed = self._reviewed(path, change, modeled)
        except InputError as exc:
            return f"{where}, and the rubric the gate reviewed there cannot be built to compare ({exc.what}): {REBASE}"
        if at_merge is None:
            return None if reviewed is None else f"{self.name} deletes `{path}`, which the gate reviewed as kept: {REBASE}"
        if at_merge.mode not in REGULAR_MODES:
            return f"{where} as other than a regular file (mode {at_merge.mode}): {REBASE}"
        try:
            document = self.tree.rubric(path)
        except InputError as exc:
            return f"{self.name} turns `{path}` into a rubric that does not load ({exc.what}): {REBASE}"
        assert document is not None
        if reviewed is None:
            return f"{where}, which the gate reviewed as deleted (or absent): {REBASE}"
        differences = landing_differences(reviewed, document.rubric)
        if not differences:
            return None
        return f"{where} other than the gate reviewed it: the merge {', '.join(differences)} {UNSEEN}: {REBASE}"

    def _reviewed(self, path: str, change: ChangedFile | None, modeled: bool) -> Rubric | None:
        """The rubric the gate reviewed at `path`: the tip's where the PR does not change it, the
        head's where only the PR does, the PR's check changes applied onto the tip's where both do."""
        if change is not None and change.status == "removed":
            return None
        source = self.s.proposed if change is None else self.s.head
        document = source.rubric(path)
        if document is None or not modeled or change is None:
            return None if document is None else document.rubric
        base, tip = self.s.merge_base.rubric(change.base_path), self.s.tip.rubric(change.base_path)
        if base is None or tip is None:
            return document.rubric
        return apply_check_changes(base.rubric, document.rubric, tip.rubric)

    def file_problem(self, path: str, kinds: set[str]) -> str | None:
        """A calibration set or verdict file a rubric names: the merge must have it as the gate read
        it (head's where only the PR changed it, the tip's where the PR did not); one both sides
        changed was reviewed as merged (`trust.merged_record`, the tip's labels) and must load."""
        entries = self._entries(path)
        if entries is None:
            return None
        at_proposed, at_merge = entries
        change = self.files.get(path) or next((f for f in self.s.files if f.previous == path), None)
        both = self.both_changed(change)
        if not both and _same(at_proposed, at_merge):
            return None
        if at_merge is not None and change is not None and both:
            try:
                if "calibration" in kinds:
                    self.tree.calibration(path)
                if "verdicts" in kinds:
                    return self._record_problem(path, change)
            except InputError as exc:
                return f"{self.name} writes `{path}` as a file that does not load ({exc.what}): {REBASE}"
            return None
        side = "the head" if change is not None else "the base tip"
        what = "deletes" if at_merge is None else "writes"
        return f"{self.name} {what} `{path}` other than the gate read it (as {side} has it) {UNSEEN}: {REBASE}"


    def _record_problem(self, path: str, change: ChangedFile) -> str | None:
        """A verdict file both sides changed: the gate reviewed the record the merge leaves as the
        tip's lines, then the lines the PR appended (`trust.merged_record`); every lookup must read
        the merge's file alike. A PR that did more than append was asked to rebase already."""
        landed = self.tree.verdicts(path)
        base, tip = self.s.merge_base.verdicts(change.base_path), self.s.tip.verdicts(change.base_path)
        head = self.s.head.verdicts(path)
        expected = merged_record(base, head, tip) if base is not None and tip is not None and head is not None else None
        if landed is None or expected is None or differing_lines(expected, landed) == ((), ()):
            return None
        return (f"{self.name} writes `{path}` with a record that reads otherwise than the one the gate reviewed (the "
                f"base tip's lines, then the PR's) {UNSEEN}: {REBASE}")


def merge_bases_problem(pr: PullRequest, bases: list[str]) -> list[MergeFinding]:
    """More than one merge base of the head and the base tip (a criss-cross history): git merges
    from a virtual base the gate never read."""
    if len(bases) <= 1:
        return []
    return [_finding(THE_MERGE, f"the head {pr.head_sha[:7]} and the base tip {pr.base_sha[:7]} have {len(bases)} "
                     "merge bases (a criss-cross history, e.g. a merge with `-s ours`), so git's merge is not the one "
                     f"the gate reviewed: {REBASE}", BASES)]


def landing_problems(workspace: Path, pr: PullRequest, reader: FileReader, snapshots: Snapshots,
                     rubric_changes: list[ChangedFile], globs: tuple[str, ...], *,
                     changes_facts: bool = True) -> list[MergeFinding]:
    """What keeps the merge that will land from being the one the gate reviewed (none: it is).

    A merge group's head is the merge itself, and a head the base tip is an ancestor of merges
    into the head's own tree: then the proposed snapshot is what lands. Else git's merge in a
    checkout with history (where more than one merge base, a criss-cross history, fails at
    once), or GitHub's test merge commit of the PR for a checkout read through the API.
    `changes_facts` False (the PR changes no fact the gate reads): conflicts go unsaid, as the
    PR's own business (what its merge would do to the rubrics is still compared)."""
    if pr.merge_group or not snapshots.tip_moved:
        return []
    if isinstance(reader, RestReader):
        merged = github_test_merge(reader.repo, pr.number, pr.base_sha, pr.head_sha)
    else:
        criss_cross = merge_bases_problem(pr, git_merge_bases(workspace, pr.base_sha, pr.head_sha))
        if criss_cross:
            return criss_cross
        merged = git_merge(workspace, pr.base_sha, pr.head_sha)
    if merged.conflicts and not changes_facts:
        return []
    return merge_problems(snapshots, merged, rubric_changes, globs)
