"""Every problem in a calibration set, line by line, plus items that repeat another's content."""

from __future__ import annotations

from rubric_gate.calibration import CalibrationItem
from rubric_gate.calibration.load import parse_item
from rubric_gate.errors import InputError
from rubric_gate.lint.findings import ERROR, WARNING, Finding
from rubric_gate.sources import SourceText, iter_jsonl


def lint_calibration(source: SourceText) -> tuple[list[CalibrationItem], list[Finding]]:
    """The items that parsed, and a finding for each line that did not (and each duplicate)."""
    findings: list[Finding] = []
    items: list[CalibrationItem] = []
    id_lines: dict[str, int] = {}
    content_lines: dict[str, tuple[str, int]] = {}
    for index, raw in enumerate(source.text.split("\n")):
        line_no = index + 1
        if not raw.strip():
            continue
        try:
            # One line at a time, so a malformed line does not hide the lines after it.
            [(_, obj)] = list(iter_jsonl(raw + "\n", source.display))
            item = parse_item(obj, source.display, line_no)
        except InputError as exc:
            findings.append(Finding(source.display, line_no, ERROR, exc.what))
            continue
        if item.id in id_lines:
            findings.append(Finding(source.display, line_no, ERROR,
                                    f"duplicate item id '{item.id}' (first at line {id_lines[item.id]})"))
            continue
        id_lines[item.id] = line_no
        first = content_lines.setdefault(item.content_hash, (item.id, line_no))
        if first[1] != line_no:
            findings.append(Finding(source.display, line_no, WARNING,
                                    f"item '{item.id}' has the same input and output as item '{first[0]}' "
                                    f"(line {first[1]}): the judge sees one item twice"))
        if isinstance(item.meta, dict) and "todo" in item.meta:
            # init --from promptfoo writes each test as an item labeled pass with its output to
            # record: until someone does, the gate would score a placeholder as a correct output.
            findings.append(Finding(source.display, line_no, WARNING,
                                    f"item '{item.id}' still has a `todo` in its meta: {item.meta['todo']} (until "
                                    f"then its label '{item.label}' is a placeholder the gate would trust)"))
        items.append(item)
    if not items and not findings:
        findings.append(Finding(source.display, None, ERROR, "calibration set is empty"))
    return items, findings
