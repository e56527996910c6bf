"""Where each check sits in a rubric's YAML text, and the YAML that would replace it.

A GitHub suggestion replaces whole lines, so a repair needs the check entry's first and last
line and a replacement written at the same indentation. In a promptfoo config read in place a
check is an `llm-rubric` assertion, found where the reader stored it (`check_locs`) and
replaced by `llm-rubric` entries; a check whose text is written in several tests has no one
span to replace (its suggestion stays in the comment).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import yaml

from rubric_gate.errors import InputError
from rubric_gate.rubric import Check, RubricDocument
from rubric_gate.sources.yaml_lines import Loc, compose_document, load_located_yaml


@dataclass(frozen=True)
class CheckSpan:
    start_line: int  # 1-based, the line holding "- id: ..." (or "-")
    end_line: int  # 1-based, inclusive: the last line of the entry that is not blank or a comment
    indent: int  # column of the "-"


def check_spans(text: str) -> dict[str, CheckSpan]:
    """Spans of the checks of a block-style `checks:` list; {} if the text is not laid out so
    (a flow-style list cannot take a line-based suggestion)."""
    try:
        root = compose_document(text, "rubric")  # the one reader's tree: spans of what the gate read
    except InputError:
        return {}
    if not isinstance(root, yaml.MappingNode):
        return {}
    checks = next((v for k, v in root.value if isinstance(k, yaml.ScalarNode) and k.value == "checks"), None)
    if not isinstance(checks, yaml.SequenceNode) or checks.flow_style:
        return {}
    lines = text.split("\n")
    spans: dict[str, CheckSpan] = {}
    entries = checks.value
    for index, entry in enumerate(entries):
        if not isinstance(entry, yaml.MappingNode) or entry.flow_style:
            continue
        check_id = next((v.value for k, v in entry.value
                         if isinstance(k, yaml.ScalarNode) and k.value == "id" and isinstance(v, yaml.ScalarNode)), None)
        if check_id is None:
            continue
        spans[check_id] = _entry_span(lines, entries, index)
    return spans


def _entry_span(lines: list[str], entries: list[yaml.Node], index: int) -> CheckSpan:
    """The lines of the block-style list entry `entries[index]`, to the last that is not blank or a comment."""
    entry = entries[index]
    start = entry.start_mark.line  # 0-based; "- " is on this line
    dash = lines[start].find("-")
    if index + 1 < len(entries):
        limit = entries[index + 1].start_mark.line - 1
    else:
        limit = entry.end_mark.line - (1 if entry.end_mark.column == 0 else 0)
    end = min(limit, len(lines) - 1)
    while end > start and (not lines[end].strip() or lines[end].lstrip().startswith("#")):
        end -= 1
    return CheckSpan(start + 1, end + 1, max(dash, 0))


def _node_at(root: yaml.Node, loc: Loc) -> yaml.Node | None:
    node: yaml.Node | None = root
    for part in loc:
        if isinstance(part, int) and isinstance(node, yaml.SequenceNode) and part < len(node.value):
            node = node.value[part]
        elif isinstance(part, str) and isinstance(node, yaml.MappingNode):
            node = next((v for k, v in node.value if isinstance(k, yaml.ScalarNode) and k.value == part), None)
        else:
            return None
    return node


def document_spans(doc: RubricDocument) -> dict[str, CheckSpan]:
    """Each check's lines in the file the document was read from: a rubric's `checks` entries,
    or a promptfoo config's llm-rubric assertions (block style, written once)."""
    if doc.kind != "promptfoo":
        return check_spans(doc.source.text)
    try:
        root = compose_document(doc.source.text, doc.display)
    except InputError:
        return {}
    lines = doc.source.text.split("\n")
    spans: dict[str, CheckSpan] = {}
    for check_id, loc in doc.check_locs.items():
        if check_id in doc.repeated_locs or not loc or not isinstance(loc[-1], int):
            continue
        parent = _node_at(root, loc[:-1])
        if not isinstance(parent, yaml.SequenceNode) or parent.flow_style:
            continue
        entry = _node_at(parent, loc[-1:])
        if isinstance(entry, yaml.MappingNode) and not entry.flow_style:
            spans[check_id] = _entry_span(lines, parent.value, loc[-1])
    return spans


class _Dumper(yaml.SafeDumper):
    pass


def _str(dumper: yaml.SafeDumper, value: str) -> yaml.Node:
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style="|" if "\n" in value else None)


_Dumper.add_representer(str, _str)


def check_entry(check: Check) -> dict[str, Any]:
    data: dict[str, Any] = {"id": check.id, "text": check.text}
    if check.origin.value != "hand":
        data["origin"] = check.origin.value
    if check.frozen is not None and check.is_frozen != (check.origin.value == "label"):
        data["frozen"] = check.is_frozen
    if check.source is not None:
        data["source"] = check.source
    return data


def checks_yaml(checks: list[Check], indent: int) -> str:
    """The entries of `checks` as YAML list items whose "-" sits at column `indent`."""
    text = yaml.dump([check_entry(c) for c in checks], Dumper=_Dumper, sort_keys=False, allow_unicode=True,
                     width=100, indent=2)
    pad = " " * indent
    return "".join(pad + line if line.strip() else line for line in text.splitlines(keepends=True))


def replacement_yaml(doc: RubricDocument, check_id: str, checks: list[Check], indent: int) -> str:
    """What replaces check `check_id`'s entry: rubric checks, or for a promptfoo config one
    `llm-rubric` assertion per check, each the original assertion with its `metric` set to the
    check's id (so the file reads back as the checklist the gate accepted) and its `value` to the
    check's text, its other keys kept."""
    if doc.kind != "promptfoo" or check_id not in doc.check_locs:
        return checks_yaml(checks, indent)
    original: Any = load_located_yaml(doc.source.text, doc.display).data
    for part in doc.check_locs[check_id]:
        original = original[part]
    entries = []
    for check in checks:
        entry: dict[str, Any] = {"type": original.get("type", "llm-rubric")}
        entry.update({"metric": check.id, "value": check.text} if "metric" not in original else {})
        for key, value in original.items():
            entry[key] = check.text if key == "value" else check.id if key == "metric" else value
        entries.append(entry)
    text = yaml.dump(entries, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=100, indent=2)
    pad = " " * indent
    return "".join(pad + line if line.strip() else line for line in text.splitlines(keepends=True))
