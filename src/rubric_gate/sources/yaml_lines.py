"""Load YAML while remembering the line of every key and list entry, for error messages."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import yaml

from rubric_gate.errors import InputError

Loc = tuple[str | int, ...]

MERGE_TAG = "tag:yaml.org,2002:merge"
# Aliases let a short file expand to a huge tree ("billion laughs"); no rubric comes near this.
MAX_NODES = 200_000


@dataclass
class LocatedYaml:
    data: Any
    lines: dict[Loc, int] = field(default_factory=dict)  # path -> 1-based line
    raw: dict[Loc, str] = field(default_factory=dict)  # path -> a scalar's text as written

    def line_of(self, loc: Loc) -> int | None:
        """Line of the deepest prefix of `loc` that exists in the document."""
        for end in range(len(loc), -1, -1):
            line = self.lines.get(tuple(loc[:end]))
            if line is not None:
                return line
        return None


def _line(node: yaml.Node) -> int:
    return node.start_mark.line + 1


class _Walker:
    """Turn a composed node tree into plain data, recording lines; every failure is an InputError."""

    def __init__(self, display: str) -> None:
        self.display = display
        self.lines: dict[Loc, int] = {}
        self.raw: dict[Loc, str] = {}
        self.active: set[int] = set()  # collection nodes on the current path: an alias back to one recurses
        self.nodes = 0

    def error(self, node: yaml.Node, what: str) -> InputError:
        return InputError(self.display, what, _line(node))

    def walk(self, node: yaml.Node, loc: Loc) -> Any:
        self.nodes += 1
        if self.nodes > MAX_NODES:
            raise self.error(node, f"document too large (over {MAX_NODES} values once aliases are expanded)")
        self.lines.setdefault(loc, _line(node))
        if isinstance(node, yaml.ScalarNode):
            self.raw.setdefault(loc, node.value)
            return self.scalar(node)
        if id(node) in self.active:
            raise self.error(node, "an alias refers to a collection that contains it (recursive alias)")
        self.active.add(id(node))
        try:
            if isinstance(node, yaml.SequenceNode):
                return [self.walk(child, (*loc, index)) for index, child in enumerate(node.value)]
            assert isinstance(node, yaml.MappingNode)  # composing makes only these three kinds
            return self.mapping(node, loc)
        finally:
            self.active.discard(id(node))

    def pairs(self, node: yaml.MappingNode) -> list[tuple[yaml.Node, yaml.Node, bool]]:
        """Key/value nodes with `<<` merge keys expanded, merged ones first (so own keys win)."""
        merged: list[tuple[yaml.Node, yaml.Node, bool]] = []
        own: list[tuple[yaml.Node, yaml.Node, bool]] = []
        for key_node, value_node in node.value:
            if key_node.tag != MERGE_TAG:
                own.append((key_node, value_node, True))
                continue
            sources = value_node.value if isinstance(value_node, yaml.SequenceNode) else [value_node]
            for source in reversed(sources):  # earlier mappings in the list take precedence
                if not isinstance(source, yaml.MappingNode):
                    raise self.error(key_node, "a merge key '<<' needs a mapping or a list of mappings")
                if id(source) in self.active:
                    raise self.error(key_node, "an alias refers to a collection that contains it (recursive alias)")
                self.active.add(id(source))
                try:
                    merged.extend((k, v, False) for k, v, _ in self.pairs(source))
                finally:
                    self.active.discard(id(source))
        return merged + own

    def mapping(self, node: yaml.MappingNode, loc: Loc) -> dict[str, Any]:
        result: dict[str, Any] = {}
        own_keys: set[str] = set()
        for key_node, value_node, is_own in self.pairs(node):
            if not isinstance(key_node, yaml.ScalarNode):
                raise self.error(key_node, "mapping keys must be plain strings")
            key = self.scalar(key_node)
            if not isinstance(key, str):
                shown = yaml.safe_dump(key, default_flow_style=True).removesuffix("\n...\n").strip()
                raise self.error(key_node, f"mapping keys must be strings, got {shown} (quote it if it is meant as text)")
            if is_own:
                if key in own_keys:
                    raise self.error(key_node, f"duplicate key '{key}'")
                own_keys.add(key)
            self.lines[(*loc, key)] = _line(key_node)
            result[key] = self.walk(value_node, (*loc, key))
        return result

    def scalar(self, node: yaml.ScalarNode) -> Any:
        # PyYAML's safe constructor resolves the type (int, bool, null, ...).
        try:
            return yaml.constructor.SafeConstructor().construct_object(node, deep=True)
        except yaml.MarkedYAMLError as exc:
            problem = exc.problem or "invalid value"
            if problem.startswith("could not determine a constructor for the tag"):
                problem = f"unsupported YAML tag {node.tag!r}"
            raise self.error(node, problem) from None
        except (yaml.YAMLError, ValueError, TypeError, OverflowError) as exc:
            raise self.error(node, f"invalid {node.tag.rsplit(':', 1)[-1]} value {node.value!r} ({exc})") from None


_FAST_LOADER = getattr(yaml, "CSafeLoader", None)


def _refuse_tags(text: str, display: str) -> None:
    """Any explicit YAML tag (`!rubric`, `!!binary`, `!!python/...`, `! x`) is an error naming its line.

    A tag changes what a value is (`!!binary` turns text into bytes, a local tag on the root
    makes other YAML readers see no mapping at all), so the same file would mean one thing to
    one reader and another to the next. Plain YAML has all a rubric needs. Every tag starts
    with `!`, so files without one skip the event scan.
    """
    if "!" not in text:
        return
    loader = _FAST_LOADER or yaml.SafeLoader
    try:
        for event in yaml.parse(text, Loader=loader):
            tag = getattr(event, "tag", None)
            if tag is not None:
                tag = "!!" + tag.removeprefix("tag:yaml.org,2002:") if tag.startswith("tag:yaml.org,2002:") else tag
                raise InputError(display, f"YAML tag '{tag}' is not allowed: write plain YAML (a tag changes what "
                                 "a value means, and readers differ on it)",
                                 event.start_mark.line + 1 if event.start_mark else None)
    except yaml.YAMLError:
        return  # composing reported (or will report) the syntax error with its line


def _compose_fast(text: str) -> yaml.Node | None:
    """Compose with libyaml when PyYAML has it (about 10x faster on large rubrics); None on any
    problem, so the pure-Python loader runs and reports errors exactly as it always has."""
    if _FAST_LOADER is None or not text.strip():
        return None
    try:
        return yaml.compose(text, Loader=_FAST_LOADER)
    except (yaml.YAMLError, RecursionError, ValueError, TypeError):
        return None


# PyYAML's wording for the slips people make most, with what to do about each.
_HINTS = {
    "mapping values are not allowed here": " (a value with ': ' in it, e.g. 'task: Summarize: ...', must be quoted)",
    "found character '\\t' that cannot start any token": " (indent with spaces, not tabs)",
}


def compose_document(text: str, display: str) -> yaml.Node:
    """The node tree of one YAML document, tags refused; syntax errors become `InputError` with
    the line. Every reader of the package composes through here (the repair suggestions place
    their lines on this tree), so no file means one thing to the gate and another to a helper."""
    node = _compose_fast(text)
    try:
        node = node if node is not None else yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else None
        problem = exc.problem or exc.context or "invalid YAML"
        problem += _HINTS.get(problem, "")
        if exc.context and exc.context_mark is not None and mark is not None and exc.context_mark.line != mark.line:
            problem += f" ({exc.context} at line {exc.context_mark.line + 1})"
        raise InputError(display, f"YAML syntax error: {problem}", line) from exc
    except yaml.reader.ReaderError as exc:  # a character YAML does not allow, e.g. NUL
        line = text[: exc.position].count("\n") + 1
        raise InputError(display, f"YAML syntax error: character #x{exc.character:04x} is not allowed", line) from exc
    except yaml.YAMLError as exc:
        raise InputError(display, f"YAML syntax error: {' '.join(str(exc).split())}") from exc
    except RecursionError:
        raise InputError(display, "YAML nested too deeply") from None
    if node is None:
        raise InputError(display, "file is empty", 1)
    _refuse_tags(text, display)
    return node


def load_located_yaml(text: str, display: str) -> LocatedYaml:
    """Parse one YAML document; syntax errors become `InputError` with the line."""
    node = compose_document(text, display)
    walker = _Walker(display)
    try:
        data = walker.walk(node, ())
    except RecursionError:
        raise InputError(display, "YAML nested too deeply") from None
    return LocatedYaml(data, walker.lines, walker.raw)
