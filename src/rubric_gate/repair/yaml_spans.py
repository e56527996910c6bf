"""Where each check sits in a rubric's YAML text, and the YAML that would replace it.

A GitHub suggestion replaces whole lines, so a repair needs the check entry's first and last
line and a replacement written at the same indentation.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import yaml

from rubric_gate.errors import InputError
from rubric_gate.rubric import Check
from rubric_gate.sources.yaml_lines import compose_document


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
        start = entry.start_mark.line  # 0-based; "- " is on this line
        dash = lines[start].find("-")
        if index + 1 < len(entries):
            limit = entries[index + 1].start_mark.line - 1
        else:
            limit = entry.end_mark.line - (1 if entry.end_mark.column == 0 else 0)
        end = min(limit, len(lines) - 1)
        while end > start and (not lines[end].strip() or lines[end].lstrip().startswith("#")):
            end -= 1
        spans[check_id] = CheckSpan(start + 1, end + 1, max(dash, 0))
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
