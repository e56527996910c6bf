"""Lint one rubric file and the calibration and verdict files it names."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from rubric_gate.calibration import CalibrationItem
from rubric_gate.errors import InputError
from rubric_gate.lint.calibration_file import lint_calibration
from rubric_gate.lint.findings import ERROR, WARNING, Finding
from rubric_gate.rubric import Rubric, RubricDocument, load_rubric
from rubric_gate.rubric.load import document_problems, source_siblings
from rubric_gate.sources import load_located_yaml, read_source
from rubric_gate.verdicts import VerdictStore, verdict_column

SHOWN_ITEMS = 5  # item ids listed per check without verdicts


def _coverage_findings(rubric: Rubric, lines: dict[str, int], display: str,
                       items: list[CalibrationItem], store: VerdictStore) -> list[Finding]:
    findings = []
    for check in rubric.checks:
        column = verdict_column(check.text, items, store)
        missing = column.missing
        if items and column.not_applicable_count == len(items):
            # n/a is a valid answer; on every item it means the check never takes part in grading
            findings.append(Finding(display, lines.get(check.id), WARNING,
                                    f"check '{check.id}': answered n/a on all {len(items)} items "
                                    "(it applies to none of the calibration set)"))
        if not missing.any():
            continue
        ids = [item.id for item, gone in zip(items, missing, strict=True) if gone]
        shown = ", ".join(ids[:SHOWN_ITEMS]) + (f", +{len(ids) - SHOWN_ITEMS} more" if len(ids) > SHOWN_ITEMS else "")
        findings.append(Finding(display, lines.get(check.id), WARNING,
                                f"check '{check.id}': no recorded verdict for {len(ids)} of {len(items)} "
                                f"items ({shown})"))
    return findings


def _referenced_file(doc: RubricDocument, key: str, relative: str, root: Path) -> Path | Finding:
    path = Path(relative) if Path(relative).is_absolute() else root / relative
    if path.is_file():
        return path
    what = "is a directory, expected a file" if path.is_dir() else "file not found"
    # a promptfoo config's paths are written in the settings file, so the finding names it
    return Finding(doc.settings_display or doc.display, doc.key_lines.get(key), ERROR, f"{key} '{relative}': {what}")


def lint_rubric_file(spec: str | Path, root: Path, shared_verdicts: Iterable[str] = ()) -> list[Finding]:
    """Every finding for one rubric file; paths inside it are relative to `root`.

    Coverage counts the rubric's own verdict file plus `shared_verdicts` (as `check` merges the
    base and head rubrics' verdict files).
    """
    try:
        source = read_source(spec)
        located = load_located_yaml(source.text, source.display)
    except InputError as exc:
        return [Finding.from_error(exc)]
    display = source.display
    doc, problems, warnings = document_problems(located, source, source_siblings(source, None))
    findings = sorted((Finding.from_error(p) for p in problems), key=lambda f: f.line or 0)
    findings += [Finding.from_error(w, WARNING) for w in warnings]
    if doc is None:
        return findings
    rubric = doc.rubric

    calibration = _referenced_file(doc, "calibration", rubric.calibration, root)
    items: list[CalibrationItem] = []
    if isinstance(calibration, Finding):
        findings.append(calibration)
    else:
        try:
            cal_source = read_source(rubric.calibration, root)
        except InputError as exc:
            findings.append(Finding.from_error(exc))
        else:
            items, cal_findings = lint_calibration(cal_source)
            findings += cal_findings

    try:
        # A verdict file that does not exist yet is only a coverage gap.
        store = VerdictStore.load(rubric.verdicts, root, missing_ok=True)
        for other in dict.fromkeys(shared_verdicts):
            if other != rubric.verdicts:
                store = store.merged(VerdictStore.load(other, root, missing_ok=True))
    except InputError as exc:
        findings.append(Finding.from_error(exc))
        return findings
    torn = torn_last_line(rubric.verdicts, root)
    if torn is not None:
        findings.append(torn)
    if items:
        findings += _coverage_findings(rubric, doc.check_lines, display, items, store)
    return findings


def torn_last_line(spec: str, root: Path) -> Finding | None:
    """A hand-edited verdict file whose last line is cut off (no newline, not valid JSON): the
    store ignores that line, as it would an interrupted append, so say so."""
    import json

    path = Path(spec) if Path(spec).is_absolute() else root / spec
    try:
        data = path.read_bytes()
    except OSError:
        return None
    if not data or data.endswith(b"\n"):
        return None
    last = data[data.rfind(b"\n") + 1:]
    try:
        json.loads(last)
        return None
    except ValueError:
        return Finding(spec, data.count(b"\n") + 1, WARNING,
                       "last line is cut off (no newline and not complete JSON): it is ignored; "
                       "finish the line or delete it")


def _data_files(spec: str | Path, root: Path) -> tuple[str, str] | None:
    try:
        rubric = load_rubric(spec).rubric
    except InputError:
        return None
    return rubric.calibration, rubric.verdicts


def lint_rubric_files(specs: Iterable[str | Path], root: Path) -> list[Finding]:
    """Findings for several rubrics; a calibration file shared by two is reported once.

    Rubrics linted together that share a calibration set share their verdict files too, so
    versions of one rubric (say a base and a proposed revision) count each other's verdicts.
    """
    specs = list(specs)
    data = {spec: _data_files(spec, root) for spec in specs}
    seen: set[Finding] = set()
    result = []
    for spec in specs:
        mine = data[spec]
        shared = [d[1] for d in data.values() if d is not None and mine is not None and d[0] == mine[0]]
        for finding in lint_rubric_file(spec, root, shared):
            if finding not in seen:
                seen.add(finding)
                result.append(finding)
    return result
