"""Load YAML while remembering the line of every key and list entry, for error messages."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import yaml

from rubric_gate.errors import InputError

Loc = tuple[str | int, ...]


@dataclass
class LocatedYaml:
    data: Any
    lines: dict[Loc, int] = field(default_factory=dict)  # path -> 1-based line

    def line_of(self, loc: Loc) -> int | None:
        """Line of the deepest prefix of `loc` that exists in the document."""
        for end in range(len(loc), -1, -1):
            line = self.lines.get(tuple(loc[:end]))
            if line is not None:
                return line
        return None


def _walk(node: yaml.Node, loc: Loc, lines: dict[Loc, int], display: str) -> Any:
    lines.setdefault(loc, node.start_mark.line + 1)
    if isinstance(node, yaml.MappingNode):
        result: dict[Any, Any] = {}
        for key_node, value_node in node.value:
            if not isinstance(key_node, yaml.ScalarNode):
                raise InputError(display, "mapping keys must be plain strings", key_node.start_mark.line + 1)
            key = _scalar(key_node)
            if key in result:
                raise InputError(display, f"duplicate key '{key}'", key_node.start_mark.line + 1)
            lines[(*loc, key)] = key_node.start_mark.line + 1
            result[key] = _walk(value_node, (*loc, key), lines, display)
        return result
    if isinstance(node, yaml.SequenceNode):
        return [_walk(child, (*loc, index), lines, display) for index, child in enumerate(node.value)]
    return _scalar(node)


def _scalar(node: yaml.Node) -> Any:
    # PyYAML's safe constructor resolves the type (int, bool, null, ...).
    return yaml.constructor.SafeConstructor().construct_object(node, deep=True)


def load_located_yaml(text: str, display: str) -> LocatedYaml:
    """Parse one YAML document; syntax errors become `InputError` with the line."""
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else None
        problem = exc.problem or exc.context or "invalid YAML"
        if exc.context and exc.context_mark is not None and mark is not None and exc.context_mark.line != mark.line:
            problem += f" ({exc.context} at line {exc.context_mark.line + 1})"
        raise InputError(display, f"YAML syntax error: {problem}", line) from exc
    except yaml.YAMLError as exc:
        raise InputError(display, f"YAML syntax error: {exc}") from exc
    if node is None:
        raise InputError(display, "file is empty", 1)
    lines: dict[Loc, int] = {}
    return LocatedYaml(_walk(node, (), lines, display), lines)
