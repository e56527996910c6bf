"""A promptfoo config read in place as a checklist: each `llm-rubric` assertion a check.

promptfoo passes a test when every one of its assertions passes, so the `llm-rubric`
assertions of `defaultTest` and of the inline `tests` form one checklist under all-must-pass.
A check's id is the assertion's `metric` (made a valid id), else a slug of its text; two
different texts that would share an id each get a short hash of their text appended, so an id
never depends on the order of the assertions. The same text written in several tests is one
check (its first line is the one reported).

Nothing else in the config is touched or judged: every other assertion (and an llm-rubric
whose value is not inline text, or that sits in an assert-set or a scenario) is listed as not
gated, with its line, so the comment can name it.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from rubric_gate.errors import InputError
from rubric_gate.rubric.model import normalize_text
from rubric_gate.sources.yaml_lines import Loc, LocatedYaml

LLM_RUBRIC = "llm-rubric"
# The top-level keys only a promptfoo config has (a rubric always has `checks`).
PROMPTFOO_KEYS = ("tests", "defaultTest", "scenarios", "prompts", "providers", "targets")
MAX_SLUG = 48
_ID_CHARS = re.compile(r"[^A-Za-z0-9_.-]+")
TEMPLATE = re.compile(r"\{\{.*?\}\}|\{%.*?%\}", re.S)


def looks_like_promptfoo(data: Any) -> bool:
    """A promptfoo config, not a rubric: no `checks`, and one of promptfoo's own top-level keys."""
    return isinstance(data, dict) and "checks" not in data and any(key in data for key in PROMPTFOO_KEYS)


@dataclass(frozen=True)
class RubricAssertion:
    """One `llm-rubric` assertion gated as a check."""

    id: str
    text: str  # the value as written (verdicts key on its whitespace-normalised form)
    loc: Loc  # where the assertion's mapping is, e.g. ("tests", 2, "assert", 0)
    line: int
    metric: str | None
    where: str  # "defaultTest" or "test 3 (description)"
    others: tuple[Loc, ...] = ()  # the same text written again elsewhere


@dataclass(frozen=True)
class NotGated:
    """Something in the config the gate leaves alone, named in reports."""

    what: str  # the assertion type, or what was not read ("tests file")
    line: int | None
    why: str = ""

    def describe(self) -> str:
        at = f" (line {self.line})" if self.line else ""
        return f"{self.what}{at}" + (f": {self.why}" if self.why else "")


@dataclass
class PromptfooChecklist:
    """What the gate reads of a promptfoo config."""

    assertions: list[RubricAssertion]
    not_gated: list[NotGated]
    description: str | None
    description_line: int | None
    problems: list[InputError] = field(default_factory=list)  # templated values and ids from text (lint)


def _slug(text: str) -> str:
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    words = re.findall(r"[a-z0-9]+", ascii_text.lower())
    slug = ""
    for word in words:
        candidate = f"{slug}-{word}" if slug else word
        if len(candidate) > MAX_SLUG:
            break
        slug = candidate
    return slug or "check-" + _text_hash(text)


def _text_hash(text: str) -> str:
    return hashlib.sha256(normalize_text(text).encode("utf-8")).hexdigest()[:6]


def _metric_id(metric: str) -> str:
    return _ID_CHARS.sub("-", metric).lstrip("-._").rstrip("-")


class _Reader:
    def __init__(self, located: LocatedYaml, display: str) -> None:
        self.located = located
        self.display = display
        self.found: list[tuple[str, str | None, Loc, int, str]] = []  # text, metric, loc, line, where
        self.not_gated: list[NotGated] = []

    def line(self, loc: Loc) -> int | None:
        return self.located.line_of(loc)

    def error(self, loc: Loc, what: str) -> InputError:
        return InputError(self.display, what, self.line(loc))

    def read(self) -> None:
        data = self.located.data
        default = data.get("defaultTest")
        if isinstance(default, str):
            self.not_gated.append(NotGated("defaultTest", self.line(("defaultTest",)),
                                           f"read from {default}, which the gate does not open"))
        elif isinstance(default, dict):
            self.assertions(default.get("assert"), ("defaultTest", "assert"), "defaultTest")
        elif default is not None:
            raise self.error(("defaultTest",), "defaultTest must be a mapping (or a file:// path)")
        tests = data.get("tests")
        if isinstance(tests, list):
            for index, test in enumerate(tests):
                loc: Loc = ("tests", index)
                if isinstance(test, dict) and "path" not in test:
                    self.assertions(test.get("assert"), (*loc, "assert"), _test_name(index, test))
                else:
                    source = test if isinstance(test, str) else test.get("path") if isinstance(test, dict) else None
                    self.not_gated.append(NotGated("tests", self.line(loc), f"read from {source}, which the gate "
                                                   "does not open" if source else "not an inline test"))
        elif tests is not None:
            shown = tests if isinstance(tests, str) else "a test generator"
            self.not_gated.append(NotGated("tests", self.line(("tests",)), f"read from {shown}, which the gate "
                                           "does not open"))
        for index, scenario in enumerate(data.get("scenarios") or [] if isinstance(data.get("scenarios"), list) else []):
            count = sum(1 for _ in _assertions_in(scenario))
            if count:
                self.not_gated.append(NotGated("scenarios", self.line(("scenarios", index)),
                                               f"{count} assertion{'s' * (count != 1)} in scenario {index + 1}, "
                                               "not read"))

    def assertions(self, value: Any, loc: Loc, where: str) -> None:
        if value is None:
            return
        if not isinstance(value, list):
            raise self.error(loc, f"{_dotted(loc)} must be a list of assertions")
        for index, entry in enumerate(value):
            at = (*loc, index)
            if not isinstance(entry, dict):
                raise self.error(at, f"{_dotted(at)}: an assertion must be a mapping with a `type`")
            kind = entry.get("type")
            if not isinstance(kind, str) or not kind.strip():
                raise self.error(at, f"{_dotted(at)}: an assertion needs a `type`")
            if kind != LLM_RUBRIC:
                why = ("its assertions are combined by the set's own threshold, not all-must-pass"
                       if kind == "assert-set" else "")
                self.not_gated.append(NotGated(kind, self.line(at), why))
                continue
            text = entry.get("value")
            metric = entry.get("metric")
            if metric is not None and not isinstance(metric, str):
                raise self.error((*at, "metric"), f"{_dotted(at)}.metric must be a string")
            if not isinstance(text, str):
                self.not_gated.append(NotGated(kind, self.line(at), "its value is not inline text"))
                continue
            if text.strip().startswith("file://"):
                self.not_gated.append(NotGated(kind, self.line(at), f"its value is read from {text.strip()}"))
                continue
            if not text.strip():
                raise self.error((*at, "value"), f"{_dotted(at)}.value: an llm-rubric check text is empty")
            self.found.append((text, metric, at, self.line(at) or 1, where))


def _assertions_in(node: Any) -> Iterator[Any]:
    """Assertion entries anywhere below a scenario (its config and tests)."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "assert" and isinstance(value, list):
                yield from value
            else:
                yield from _assertions_in(value)
    elif isinstance(node, list):
        for value in node:
            yield from _assertions_in(value)


def _dotted(loc: Loc) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _test_name(index: int, test: dict[str, Any]) -> str:
    description = test.get("description")
    return f"test {index + 1}" + (f" ({description})" if isinstance(description, str) and description else "")


def read_checklist(located: LocatedYaml, display: str) -> PromptfooChecklist:
    """The llm-rubric assertions of a promptfoo config as checks, and what is not gated."""
    reader = _Reader(located, display)
    reader.read()
    # One check per distinct text (whitespace-normalised, as verdicts are keyed), in file order.
    groups: dict[str, list[tuple[str, str | None, Loc, int, str]]] = {}
    for found in reader.found:
        groups.setdefault(normalize_text(found[0]), []).append(found)
    candidates: dict[str, str] = {}
    for key, group in groups.items():
        metric = next((m for _, m, _, _, _ in group if m), None)
        candidates[key] = (_metric_id(metric) if metric else "") or _slug(group[0][0])
    counts: dict[str, int] = {}
    for candidate in candidates.values():
        counts[candidate] = counts.get(candidate, 0) + 1
    problems: list[InputError] = []
    assertions: list[RubricAssertion] = []
    for key, group in groups.items():
        text, metric, loc, line, where = group[0]
        check_id = candidates[key]
        if counts[check_id] > 1:  # two texts, one id: each keeps an id of its own, whatever the order
            check_id = f"{check_id}-{_text_hash(text)}"
        metric = next((m for _, m, _, _, _ in group if m), None)
        assertions.append(RubricAssertion(check_id, text, loc, line, metric, where,
                                          tuple(other[2] for other in group[1:])))
        if TEMPLATE.search(text):
            problems.append(InputError(display, f"check '{check_id}': its text is a template ({{{{ ... }}}}); "
                                       "the gate's judge reads it as written, not filled in per test", line))
        if metric is None:
            problems.append(InputError(display, f"check '{check_id}' has no metric: its id comes from its text, so "
                                       "rewording it reads as deleting one check and adding another (add "
                                       f"`metric: {check_id}` to keep its id)", line))
    description = located.data.get("description")
    return PromptfooChecklist(assertions, reader.not_gated,
                              description if isinstance(description, str) and description.strip() else None,
                              located.line_of(("description",)) if isinstance(description, str) else None,
                              problems)


def git_blob_id(text: str) -> str:
    """The id git gives this text as a blob (what `git hash-object` prints), first 7 digits."""
    data = text.encode("utf-8")
    return hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()[:7]
