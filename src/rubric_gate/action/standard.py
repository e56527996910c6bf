"""Read what a PR does to the labels and recorded verdicts of every rubric under the glob.

Labels are the standard every rubric is gated on, and recorded verdicts are the evidence the
gate replays: a PR that relabels or removes labeled items, repoints a rubric's `calibration`
or `verdicts`, or changes a base verdict's answer needs an override, even when no rubric file
changed. The decisions are `rubric_gate.guard`'s; this module supplies the files.
"""

from __future__ import annotations

from dataclasses import dataclass

from rubric_gate.action.blob_cache import read_store
from rubric_gate.action.changed import ChangedFile, matches_any
from rubric_gate.action.gate_file import UNREADABLE_BASE
from rubric_gate.action.pairing import rubric_keys
from rubric_gate.action.sources import FileReader
from rubric_gate.boundary import classify_rubric_changes
from rubric_gate.calibration import parse_calibration
from rubric_gate.errors import InputError
from rubric_gate.guard import (
    JudgedKey,
    changed_answers,
    confirmed_by_judge,
    diff_labels,
    filled_answers,
    removed_answers,
)
from rubric_gate.guard.verdicts import ChangedAnswer, RemovedAnswer
from rubric_gate.rubric import normalize_text, parse_rubric_text
from rubric_gate.sources import SourceText
from rubric_gate.verdicts import VerdictStore, task_hash


@dataclass(frozen=True)
class StandardFinding:
    path: str  # the calibration or verdict file (or the rubric, for a repointed key)
    used_by: tuple[str, ...]  # rubric files that use it
    message: str
    blocking: bool  # needs the override label

    def to_dict(self) -> dict[str, object]:
        return {"file": self.path, "used_by": list(self.used_by), "message": self.message, "blocking": self.blocking}


def _display(sha: str, path: str) -> str:
    return f"{sha[:7]}:{path}"


def gate_standard(reader: FileReader, base_sha: str, head_sha: str, base_files: list[str],
                    globs: tuple[str, ...], files: list[ChangedFile], rubric_changes: list[ChangedFile],
                    judged: dict[JudgedKey, str], tip: tuple[str, list[str]] | None = None) -> list[StandardFinding]:
    """Findings on labels and verdicts. `tip`: the base branch's tip and its files, when it moved on
    since the merge base: its rubrics use labels and verdicts too, as soon as this PR merges.
    `judged`: what a configured judge answered in this run, by (task, check text, item): a changed
    answer is excused only where the judge gave the same one under the task of every rubric
    reading the file. An answer changed for any other pair (the same text on the items, or under
    the task, of a rubric sharing the verdict file) was never re-judged."""
    # Added files too: a verdict file a base rubric names but the base lacks (its verdicts were
    # in the cache) is created as the record the next PR is gated on; a calibration set so
    # created is the standard of a rubric that did not load.
    changed = {f.base_path: f for f in files if f.status != "added"}
    created = {f.path: f for f in files if f.status == "added"}
    calibrations: dict[str, list[str]] = {}
    verdict_files: dict[str, list[tuple[str, str | None]]] = {}
    for sha, paths in ((base_sha, base_files), *([tip] if tip else [])):
        for path in (p for p in paths if matches_any(p, globs)):
            keys = rubric_keys(reader, sha, path)
            if "calibration" in keys and path not in calibrations.get(keys["calibration"], []):
                calibrations.setdefault(keys["calibration"], []).append(path)
            if "verdicts" in keys and (path, keys.get("calibration")) not in verdict_files.get(keys["verdicts"], []):
                verdict_files.setdefault(keys["verdicts"], []).append((path, keys.get("calibration")))
    findings: list[StandardFinding] = []
    # Files whose every rubric this PR deletes go with them (the deletion itself is gated).
    deleted = {c.path for c in rubric_changes if c.status == "removed"}
    calibrations = {k: v for k, v in calibrations.items() if not set(v) <= deleted}
    verdict_files = {k: v for k, v in verdict_files.items() if not {u for u, _ in v} <= deleted}
    for cal_path, users in sorted(calibrations.items()):
        if cal_path in changed or cal_path in created:
            findings.extend(_label_findings(reader, base_sha, head_sha, cal_path, changed.get(cal_path) or created[cal_path],
                                            tuple(users)))
    for v_path, users_and_cal in sorted(verdict_files.items()):
        if v_path in changed or v_path in created:
            v_users = tuple(u for u, _ in users_and_cal)
            cal_paths = tuple(sorted({c for _, c in users_and_cal if c}))  # rubrics sharing it may not share labels
            in_use = _texts_in_use(reader, head_sha, v_users, rubric_changes)
            trusted = _trusted_texts(reader, [base_sha, *([tip[0]] if tip else [])], v_users)
            # The tasks its rubrics read it under, on the merge base and the tip alike.
            tasks = {task_hash(keys["task"]) for sha in (base_sha, *([tip[0]] if tip else []))
                     for keys in (rubric_keys(reader, sha, u) for u in v_users) if "task" in keys}
            findings.extend(_verdict_findings(reader, base_sha, head_sha, v_path, changed.get(v_path) or created[v_path],
                                              cal_paths, v_users, judged, in_use, trusted, tasks,
                                              tip[0] if tip else None))
    for change in rubric_changes:
        if change.status in ("modified", "renamed"):
            findings.extend(_rubric_key_findings(reader, base_sha, head_sha, change))
    return findings


def _rubric_key_findings(reader: FileReader, base_sha: str, head_sha: str,
                         change: ChangedFile) -> list[StandardFinding]:
    """The rubric's own keys, classified (`boundary.rubric_diff`): what needs the override here.
    A version that does not load is reported where the rubric is gated."""
    try:
        base_text, head_text = reader.read(base_sha, change.base_path), reader.read(head_sha, change.path)
        if base_text is None or head_text is None:
            return []
        base = parse_rubric_text(base_text, _display(base_sha, change.base_path)).rubric
        head = parse_rubric_text(head_text, _display(head_sha, change.path)).rubric
    except InputError:
        return []
    out = []
    for diff in classify_rubric_changes(base, head):
        if not diff.needs_override:
            continue
        if diff.key in ("calibration", "verdicts"):
            message = f"repoints `{diff.key}` from {diff.before} to {diff.after}"
        elif diff.key == "task":
            # The judge reads the task with every check: the gate cannot see what a new task does
            # to the verdicts (one saying "every output is fine" would pass).
            message = ("rewords `task`, which the judge reads with every check; recorded and cached verdicts "
                       "were judged against the old wording, so the gate cannot tell what the change does")
        elif diff.key == "judge":
            message = (f"changes `judge` from {diff.before or '(none)'} to {diff.after or '(none)'}; the rubric's "
                       "judge produces the verdicts later PRs are gated on (without one they replay the PR's own)")
        else:
            message = f"changes `{diff.key}`, which no rule of the gate classifies, so it needs the override"
        out.append(StandardFinding(change.path, (change.path,), message, True))
    return out


def _label_findings(reader: FileReader, base_sha: str, head_sha: str, path: str, change: ChangedFile,
                    users: tuple[str, ...]) -> list[StandardFinding]:
    base_text = reader.read(base_sha, path)
    if base_text is None:
        if change.status != "added":
            return []
        # A rubric at the base names it, so that rubric did not load there: labels this PR
        # writes would become the standard the next PR is gated on, vouched for by nobody.
        return [StandardFinding(path, users, UNREADABLE_BASE.format(
            what="the calibration set", why="this PR creates it") + "; the labels it writes become the standard "
            "later PRs are gated on", True)]
    try:
        base = parse_calibration(SourceText(_display(base_sha, path), base_text, None))
    except InputError as exc:  # vouches for nothing: what the PR changes in it cannot be compared
        return [StandardFinding(path, users, UNREADABLE_BASE.format(what="the calibration set", why=exc.message),
                                True)]
    head_path = change.path if change.status != "removed" else path
    head_text = None if change.status == "removed" else reader.read(head_sha, head_path)
    if head_text is None:
        return [StandardFinding(path, users, f"deletes the calibration set ({len(base.items)} labeled items)", True)]
    try:
        head = parse_calibration(SourceText(_display(head_sha, head_path), head_text, None))
    except InputError as exc:
        return [StandardFinding(path, users, f"the new calibration set does not load: {exc.message}", True)]
    diff = diff_labels(base.items, head.items)
    out = []
    if change.status == "renamed":
        out.append(StandardFinding(path, users, f"moves the calibration set to {change.path} (a rubric that "
                                   "still names the old path no longer loads)", True))
    parts = diff.describe()
    if parts:
        out.append(StandardFinding(path, users, "; ".join(parts), diff.blocking))
    return out


def _texts_in_use(reader: FileReader, head_sha: str, users: tuple[str, ...],
                  rubric_changes: list[ChangedFile]) -> set[str] | None:
    """The check texts (normalised) the rubrics using a verdict file still have at the head;
    None when one of them does not load there (then every lost answer counts)."""
    moved = {c.base_path: c for c in rubric_changes}
    texts: set[str] = set()
    for user in users:
        change = moved.get(user)
        if change is not None and change.status == "removed":
            continue
        path = change.path if change is not None else user
        try:
            text = reader.read(head_sha, path)
            if text is None:
                continue
            texts.update(c.normalized_text for c in parse_rubric_text(text, _display(head_sha, path)).rubric.checks)
        except InputError:
            return None
    return texts


def _trusted_texts(reader: FileReader, shas: list[str], users: tuple[str, ...]) -> set[str] | None:
    """The check texts (normalised) of the rubrics using a verdict file, as the base branch has
    them; None when one of them does not load there: which texts its checks have is unknown, so
    an answer filled in for any text may be one for its checks (once fixed, the record)."""
    texts: set[str] = set()
    for sha in shas:
        for user in users:
            try:
                text = reader.read(sha, user)
                if text is not None:
                    texts.update(c.normalized_text for c in parse_rubric_text(text, _display(sha, user)).rubric.checks)
            except InputError:
                return None
    return texts


def _verdict_findings(reader: FileReader, base_sha: str, head_sha: str, path: str, change: ChangedFile,
                      cal_paths: tuple[str, ...], users: tuple[str, ...], judged: dict[JudgedKey, str],
                      in_use: set[str] | None, trusted: set[str] | None, tasks: set[str],
                      tip_sha: str | None = None) -> list[StandardFinding]:
    reader.blob_id(base_sha, path)  # a symlink or submodule is refused (exit 2), not "does not load"
    try:
        found = read_store(reader, base_sha, path)  # the rubrics' own parse, shared by blob id
        if found is None:
            if change.status != "added":
                return []
            # Created by the PR: every answer in it is new to the record (none there before).
            found = VerdictStore.from_source(SourceText(_display(base_sha, path), "", None))
        base = found
    except InputError as exc:
        return [StandardFinding(path, users, UNREADABLE_BASE.format(what="the verdict store", why=exc.message), True)]
    item_sets = []
    for cal_path in cal_paths or ("(none named)",):
        # Missing or broken, the rubrics reading this file did not load at the base: which of
        # its answers are evidence is unknown, and what this PR records would become the record.
        cal_text = reader.read(base_sha, cal_path) if cal_paths else None
        if cal_text is None and tip_sha is not None and cal_paths and reader.read(tip_sha, cal_path) is not None:
            continue  # the labels of a rubric the base branch added since the merge base
        try:
            if cal_text is None:
                raise InputError(_display(base_sha, cal_path), "not found")
            item_sets.append(parse_calibration(SourceText(_display(base_sha, cal_path), cal_text, None)).items)
        except InputError as exc:  # the items its verdicts answer cannot be told apart
            return [StandardFinding(path, users, UNREADABLE_BASE.format(
                what=f"the calibration set {cal_path} its verdicts answer", why=exc.message), True)]
    if not item_sets:
        return []
    if change.status != "removed":
        reader.blob_id(head_sha, change.path)
    try:
        head = None if change.status == "removed" else read_store(reader, head_sha, change.path)
    except InputError as exc:
        return [StandardFinding(path, users, f"the new verdict store does not load: {exc.message}", True)]
    if head is None:
        return [StandardFinding(path, users, f"deletes the verdict store ({len(base)} recorded verdicts)", True)]
    answers = list(dict.fromkeys(a for items in item_sets for a in changed_answers(base, head, items, tasks)))
    rejudged = [a for a in answers if confirmed_by_judge(a.text, a.item_hash, a.head, judged, tasks)]
    unjudged = [a for a in answers if not confirmed_by_judge(a.text, a.item_hash, a.head, judged, tasks)]
    removed = [r for r in dict.fromkeys(r for items in item_sets for r in removed_answers(base, head, items, tasks))
               if in_use is None or normalize_text(r.text) in in_use]
    # Verdicts for a new check text are the gate's to weigh (they may reject, never excuse); a
    # PR's answers for checks the base already has would become the record the next PR is gated on.
    filled = [a for a in dict.fromkeys(a for items in item_sets for a in filled_answers(base, head, items, tasks))
              if (trusted is None or normalize_text(a.text) in trusted) and not confirmed_by_judge(a.text, a.item_hash, a.head, judged, tasks)]
    out = []
    if change.status == "renamed":
        out.append(StandardFinding(path, users, f"moves the verdict store to {change.path} (a rubric that still "
                                   "names the old path finds no recorded verdict)", True))
    if rejudged:
        out.append(StandardFinding(path, users, f"changes {len(rejudged)} recorded answer(s) ({_shown(rejudged)}); the "
                                   "configured judge re-judged these pairs and gave the same answers",
                                   False))
    if unjudged:
        out.append(StandardFinding(path, users, f"changes {len(unjudged)} recorded answer(s) ({_shown(unjudged)}) "
                                   "that the configured judge did not confirm in this run", True))
    if filled:
        out.append(StandardFinding(path, users, f"records {len(filled)} answer(s) for checks the base branch already "
                                   f"has, where it had none ({_shown(filled)}), that no judge re-judged in this run; "
                                   "once merged they are the record later PRs are gated on", True))
    if removed:
        out.append(StandardFinding(path, users, f"removes {len(removed)} recorded verdict(s) of checks still in use "
                                   f"({_shown(removed)}); a lost answer is lost evidence, and the gap could be "
                                   "filled with another answer later", True))
    return out


def _shown(answers: list[ChangedAnswer] | list[RemovedAnswer]) -> str:
    return ", ".join(str(a) for a in answers[:10]) + (f" and {len(answers) - 10} more" if len(answers) > 10 else "")
