"""One diff of every fact the gate depends on, between the trusted and the proposed snapshot.

Per rubric its parsed document (`trust.classify_rubric_changes`), per calibration set each
item's content and label (`trust.diff_labels`), per verdict file each answer as a lookup reads it,
per (task, check text, item, judge key), lines that disappeared included (`trust.answers`); and
across rubrics, that each `id` names one file. Each difference has a kind, and each kind its rule
(`trust.differences`): a kind no rule names needs the override. The rubric files' part (each
changed rubric, shared ids, trusted rubrics that do not load) is `snapshot.rubrics`'.

The files compared are those the PR changed since its merge base: every other file the
proposed snapshot has is the base tip's, which the base branch vouches for.
"""

from __future__ import annotations

from collections.abc import Callable

from rubric_gate.action.commits.changed import ChangedFile
from rubric_gate.action.commits.snapshot.model import Snapshot, Snapshots
from rubric_gate.action.commits.snapshot.rubrics import (
    rubric_differences,
    shared_ids,
    unreadable_rubrics,
    why_unreadable,
)
from rubric_gate.errors import InputError
from rubric_gate.rubric import normalize_text
from rubric_gate.sources import SourceText
from rubric_gate.trust import (
    Confirms,
    changed_answers,
    diff_labels,
    filled_answers,
    merged_record,
    removed_answers,
    wording,
)
from rubric_gate.trust.answers import ChangedAnswer, RemovedAnswer
from rubric_gate.trust.differences import Difference, Kind, Rule, rule_of, verdict_field
from rubric_gate.trust.wording import UNREADABLE_BASE
from rubric_gate.verdicts import Verdict, VerdictStore, task_hash
from rubric_gate.verdicts.compare import added_lines


def diff_snapshots(snapshots: Snapshots, globs: tuple[str, ...], rubric_changes: list[ChangedFile],
                   confirms: Confirms | None = None, judge_gated: frozenset[str] = frozenset()) -> list[Difference]:
    """Every difference, in the order reviewers read them: labels, verdicts, rubric keys, ids.

    `rubric_changes`: the PR's rubric files (rewrites paired). `confirms`: which changed recorded
    answers a trusted source gave at the full key of the line the head reads (`trust.Confirms`:
    the configured judge, live in this run); None: none is confirmed. `judge_gated`: the rubric
    files whose change of `judge` rule J decided in this run (both judges called)."""
    files = snapshots.files
    # Added files too: a verdict file a base rubric names but the base lacks (its verdicts were
    # in the cache) is created as the record the next PR is gated on; a calibration set so
    # created is the standard of a rubric that did not load.
    changed = {f.base_path: f for f in files if f.status != "added"}
    created = {f.path: f for f in files if f.status == "added"}
    calibrations, verdict_files, unreadable = _files_in_use(snapshots, globs)
    # Files whose every rubric this PR deletes go with them (the deletion itself is gated).
    deleted = {c.path for c in rubric_changes if c.status == "removed"}
    calibrations = {k: v for k, v in calibrations.items() if not set(v) <= deleted}
    verdict_files = {k: v for k, v in verdict_files.items() if not {u for u, _ in v} <= deleted}
    out: list[Difference] = []
    for cal_path, users in sorted(calibrations.items()):
        if cal_path in changed or cal_path in created:
            out.extend(_label_differences(snapshots, cal_path, changed.get(cal_path) or created[cal_path],
                                          tuple(users)))
    for v_path, users_and_cal in sorted(verdict_files.items()):
        if v_path in changed or v_path in created:
            v_users = tuple(u for u, _ in users_and_cal)
            cal_paths = tuple(sorted({c for _, c in users_and_cal if c}))  # rubrics sharing it may not share labels
            out.extend(_verdict_differences(snapshots, v_path, changed.get(v_path) or created[v_path], cal_paths,
                                            v_users, confirms, rubric_changes))
    for change in rubric_changes:
        out.extend(rubric_differences(snapshots, change, change.path in judge_gated))
    out.extend(shared_ids(snapshots, globs))
    out.extend(unreadable_rubrics(unreadable, files, set(calibrations) | set(verdict_files), globs))
    return out


def _files_in_use(snapshots: Snapshots, globs: tuple[str, ...]) -> tuple[
        dict[str, list[str]], dict[str, list[tuple[str, str | None]]], dict[str, str]]:
    """The calibration sets and verdict files the trusted rubrics name, with the rubrics naming
    them: the merge base's, and the tip's (rubrics main added since use labels too, once merged);
    and the trusted rubrics whose `calibration` or `verdicts` cannot be read, with why."""
    calibrations: dict[str, list[str]] = {}
    verdict_files: dict[str, list[tuple[str, str | None]]] = {}
    unreadable: dict[str, str] = {}
    for snapshot in snapshots.trusted:
        for path in snapshot.rubric_paths(globs):
            keys = snapshot.rubric_keys(path)
            if not keys.get("calibration", "").strip() or not keys.get("verdicts", "").strip():
                unreadable.setdefault(path, f"at {snapshot.name} {snapshot.sha[:7]}: {why_unreadable(snapshot, path)}")
            if "calibration" in keys and path not in calibrations.get(keys["calibration"], []):
                calibrations.setdefault(keys["calibration"], []).append(path)
            if "verdicts" in keys and (path, keys.get("calibration")) not in verdict_files.get(keys["verdicts"], []):
                verdict_files.setdefault(keys["verdicts"], []).append((path, keys.get("calibration")))
    return calibrations, verdict_files, unreadable


# -- labels --------------------------------------------------------------------------------------

def _label_differences(snapshots: Snapshots, path: str, change: ChangedFile,
                       users: tuple[str, ...]) -> list[Difference]:
    base_snapshot, head_snapshot = snapshots.merge_base, snapshots.head
    if base_snapshot.file(path) is None:
        if change.status != "added":
            return []
        return [Difference(Kind.CALIBRATION_CREATED, path, users, wording.calibration_created())]
    try:
        base = base_snapshot.calibration(path)
    except InputError as exc:  # vouches for nothing: what the PR changes in it cannot be compared
        return [Difference(Kind.CALIBRATION_UNREADABLE, path, users,
                           UNREADABLE_BASE.format(what="the calibration set", why=exc.message))]
    assert base is not None
    head_path = change.path if change.status != "removed" else path
    head_file = None if change.status == "removed" else head_snapshot.file(head_path)
    if head_file is None:
        return [Difference(Kind.CALIBRATION_DELETED, path, users, wording.calibration_deleted(len(base.items)))]
    # A proposed version that does not load is bad input (exit 2, naming its line), which no
    # override covers: the InputError goes up as it is.
    head = head_snapshot.calibration(head_path)
    assert head is not None
    out = []
    if change.status == "renamed":
        out.append(Difference(Kind.CALIBRATION_MOVED, path, users, wording.calibration_moved(change.path)))
    out.extend(Difference(kind, path, users, wording.label_phrase(kind, found), len(found))
               for kind, found in diff_labels(base.items, head.items).by_kind())
    return out


# -- verdicts ------------------------------------------------------------------------------------

def _verdict_differences(snapshots: Snapshots, path: str, change: ChangedFile, cal_paths: tuple[str, ...],
                         users: tuple[str, ...], confirms: Confirms | None,
                         rubric_changes: list[ChangedFile]) -> list[Difference]:
    base_snapshot, head_snapshot = snapshots.merge_base, snapshots.head
    base_snapshot.blob_id(path)  # a symlink or submodule is refused (exit 2), not "does not load"
    try:
        found = base_snapshot.verdicts(path)  # the rubrics' own parse, shared by blob id
        if found is None:
            if change.status != "added":
                return []
            # Created by the PR: every answer in it is new to the record (none there before).
            found = VerdictStore.from_source(SourceText(base_snapshot.display(path), "", None))
        base = found
    except InputError as exc:
        return [Difference(Kind.VERDICTS_UNREADABLE, path, users,
                           UNREADABLE_BASE.format(what="the verdict store", why=exc.message))]
    item_sets = []
    for cal_path in cal_paths or ("(none named)",):
        # Missing or broken, the rubrics reading this file did not load at the base: which of
        # its answers are evidence is unknown, and what this PR records would become the record.
        cal_file = base_snapshot.file(cal_path) if cal_paths else None
        if cal_file is None and snapshots.tip_moved and cal_paths and snapshots.tip.file(cal_path) is not None:
            continue  # the labels of a rubric the base branch added since the merge base
        try:
            calibration = base_snapshot.calibration(cal_path) if cal_file is not None else None
            if calibration is None:
                raise InputError(base_snapshot.display(cal_path), "not found")
            item_sets.append(calibration.items)
        except InputError as exc:  # the items its verdicts answer cannot be told apart
            return [Difference(Kind.VERDICTS_UNREADABLE, path, users, UNREADABLE_BASE.format(
                what=f"the calibration set {cal_path} its verdicts answer", why=exc.message))]
    if not item_sets:
        return []
    if change.status != "removed":
        head_snapshot.blob_id(change.path)
    # Bad input when it does not load (exit 2), as the calibration set above.
    head = None if change.status == "removed" else head_snapshot.verdicts(change.path)
    if head is None:
        return [Difference(Kind.VERDICTS_DELETED, path, users, wording.verdicts_deleted(len(base)))]
    in_use = _texts_in_use(snapshots.head, users, rubric_changes)
    trusted = _trusted_texts(snapshots.trusted, users)
    # The tasks its rubrics read it under, on the merge base and the tip alike.
    task_texts = {task_hash(keys["task"]): keys["task"] for snapshot in snapshots.trusted
                  for keys in (snapshot.rubric_keys(u) for u in users) if "task" in keys}
    tasks = set(task_texts)
    answers = list(dict.fromkeys(a for items in item_sets for a in changed_answers(base, head, items, tasks)))
    removed = list(dict.fromkeys(r for items in item_sets for r in removed_answers(base, head, items, tasks)))
    filled = list(dict.fromkeys(a for items in item_sets for a in filled_answers(base, head, items, tasks)))

    def in_trusted(answer: ChangedAnswer) -> bool:
        return trusted is None or normalize_text(answer.text) in trusted

    # Confirmed: a trusted source (the configured judge, live in this run) gave the answer the head
    # reads, at the full key of the line that wins each lookup (`trust.confirmation_keys`).
    items_by_id = {i.id: i for items in item_sets for i in items}
    asked = [*answers, *(a for a in filled if in_trusted(a))]
    confirmed_set = confirms(asked, head, task_texts, items_by_id) if confirms is not None and asked else set()

    def confirmed(answer: ChangedAnswer) -> bool:
        return answer in confirmed_set

    def gated(answer: ChangedAnswer) -> bool:  # a check of a rubric reading the file, as the head has it
        return in_use is None or normalize_text(answer.text) in in_use

    out = []
    if change.status == "renamed":
        out.append(Difference(Kind.VERDICTS_MOVED, path, users, wording.verdicts_moved(change.path)))
    groups: list[tuple[Kind, list[ChangedAnswer] | list[RemovedAnswer]]] = [
        (Kind.ANSWER_REJUDGED, [a for a in answers if confirmed(a)]),
        (Kind.ANSWER_CHANGED, [a for a in answers if not confirmed(a)]),
        (Kind.ANSWER_FILLED, [a for a in filled if in_trusted(a) and not confirmed(a)]),
        (Kind.ANSWER_FILLED_REJUDGED, [a for a in filled if in_trusted(a) and confirmed(a)]),
        (Kind.ANSWER_FOR_NEW_CHECK, [a for a in filled if not in_trusted(a) and gated(a)]),
        (Kind.ANSWER_FOR_NO_CHECK, [a for a in filled if not in_trusted(a) and not gated(a)]),
        (Kind.ANSWER_REMOVED, [r for r in removed if in_use is None or normalize_text(r.text) in in_use]),
        (Kind.ANSWER_REMOVED_WITH_CHECK, [r for r in removed if in_use is not None
                                          and normalize_text(r.text) not in in_use]),
    ]
    out.extend(Difference(kind, path, users, wording.answers_message(kind, answered), len(answered))
               for kind, answered in groups if answered)
    out.extend(_merged_onto_tip(snapshots, path, users, cal_paths, item_sets, base, head, task_texts, confirms,
                                in_trusted))
    unknown = _unclassified_fields(base, head)
    if unknown:
        out.append(Difference(Kind.VERDICTS_UNCLASSIFIED, path, users, wording.unclassified_fields(unknown),
                              len(unknown)))
    return out


def _merged_onto_tip(snapshots: Snapshots, path: str, users: tuple[str, ...], cal_paths: tuple[str, ...],
                     item_sets: list, base: VerdictStore, head: VerdictStore, task_texts: dict[str, str],
                     confirms: Confirms | None,
                     in_trusted: Callable[[ChangedAnswer], bool]) -> list[Difference]:
    """The answers as the merge leaves them, against the tip's, when main changed the file since
    the merge base (`trust.merged_record`): a line the PR appends can outrank one main recorded."""
    if not snapshots.tip_moved:
        return []
    try:
        tip = snapshots.tip.verdicts(path)
        tip_sets = [c.items for c in (snapshots.tip.calibration(p) for p in cal_paths) if c is not None] or item_sets
    except InputError:
        return []  # reported where the tip's rubric is gated
    if tip is None:
        return []
    if tip.same_blob(base):
        # The merge leaves the head's file: compared on the items main labeled or rewrote since
        # (the merge base's items are compared above).
        known = {(i.id, i.content_hash) for items in item_sets for i in items}
        tip_sets = [fresh for fresh in (tuple(i for i in items if (i.id, i.content_hash) not in known)
                                        for items in tip_sets) if fresh]
        if not tip_sets:
            return []
    merged = head if tip.same_blob(base) else merged_record(base, head, tip)
    if merged is None:
        return [Difference(Kind.ANSWER_CHANGED, path, users, wording.tip_record_not_comparable(snapshots.tip.sha))]
    tasks = set(task_texts)
    asked = list(dict.fromkeys(a for items in tip_sets for a in changed_answers(tip, merged, items, tasks)))
    asked += [a for a in dict.fromkeys(a for items in tip_sets for a in filled_answers(tip, merged, items, tasks))
              if in_trusted(a)]
    items_by_id = {i.id: i for items in tip_sets for i in items}
    confirmed = confirms(asked, merged, task_texts, items_by_id) if confirms is not None and asked else set()
    changed = [a for a in asked if a not in confirmed]
    lost = list(dict.fromkeys(r for items in tip_sets for r in removed_answers(tip, merged, items, tasks)))
    out = []
    if changed:
        out.append(Difference(Kind.ANSWER_CHANGED, path, users, wording.tip_answers_changed(snapshots.tip.sha, changed),
                              len(changed)))
    if lost:
        out.append(Difference(Kind.ANSWER_REMOVED, path, users, wording.tip_answers_removed(snapshots.tip.sha, lost),
                              len(lost)))
    return out


def _unclassified_fields(base: VerdictStore, head: VerdictStore) -> list[str]:
    """Verdict fields with no rule (`trust.differences.RULES`) set on a line only one side has."""
    fields = [f for f in Verdict.model_fields if rule_of(verdict_field(f)) is Rule.UNCLASSIFIED]
    if not fields:
        return []
    lines = [*added_lines(base, head), *added_lines(head, base)]
    return [f for f in fields if any(getattr(v, f) is not None for v in lines)]


def _texts_in_use(head: Snapshot, users: tuple[str, ...], rubric_changes: list[ChangedFile]) -> set[str] | None:
    """The check texts (normalised) the rubrics using a verdict file still have at the head;
    None when one of them does not load there (then every lost answer counts)."""
    moved = {c.base_path: c for c in rubric_changes}
    texts: set[str] = set()
    for user in users:
        change = moved.get(user)
        if change is not None and change.status == "removed":
            continue
        try:
            doc = head.rubric(change.path if change is not None else user)
        except InputError:
            return None
        if doc is not None:
            texts.update(c.normalized_text for c in doc.rubric.checks)
    return texts


def _trusted_texts(trusted: tuple[Snapshot, ...], users: tuple[str, ...]) -> set[str] | None:
    """The check texts (normalised) of the rubrics using a verdict file, as the base branch has
    them; None when one of them does not load there: which texts its checks have is unknown, so
    an answer filled in for any text may be one for its checks (once fixed, the record)."""
    texts: set[str] = set()
    for snapshot in trusted:
        for user in users:
            try:
                doc = snapshot.rubric(user)
            except InputError:
                return None
            if doc is not None:
                texts.update(c.normalized_text for c in doc.rubric.checks)
    return texts

