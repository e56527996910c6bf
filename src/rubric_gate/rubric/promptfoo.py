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

What promptfoo reads beside a check's text to grade it (`Grading`: the tests each check applies
to, its assertion's other keys such as `weight`, `threshold`, `provider` or `rubricPrompt`, and
the tests' `threshold` and `options`) is not the gate's to weigh: `grading_changes` names where
an edit narrows or changes it, a difference that needs the override.
"""

from __future__ import annotations

import hashlib
import json
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


ALL_TESTS = "every test"  # a check in `defaultTest`
# An llm-rubric assertion's keys the gate reads; every other one changes how promptfoo grades it.
READ_KEYS = ("type", "value", "metric")
# A test's keys that change how promptfoo passes it or grades its llm-rubric assertions.
TEST_GRADING_KEYS = ("threshold", "options")


@dataclass(frozen=True)
class Grading:
    """What promptfoo reads besides the checks' texts to grade a config's llm-rubric assertions."""

    scopes: dict[str, str | tuple[str, ...]]  # check id -> ALL_TESTS, or the tests it is written in
    keys: dict[str, str]  # check id -> its assertions' other keys, as canonical JSON ("" when none)
    tests: tuple[str, ...]  # the inline tests, by name (description, else "test N")
    settings: dict[str, str]  # "defaultTest.options", "<test>.threshold", ... -> canonical JSON


@dataclass
class PromptfooChecklist:
    """What the gate reads of a promptfoo config."""

    assertions: list[RubricAssertion]
    not_gated: list[NotGated]
    description: str | None
    description_line: int | None
    problems: list[InputError] = field(default_factory=list)  # templated values and ids from text (lint)
    grading: Grading | None = None


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
        self.tests: list[str] = []  # the inline tests' names (`_test_key`)
        self.settings: dict[str, str] = {}  # Grading.settings
        self.keys: dict[Loc, str] = {}  # each llm-rubric assertion's other keys (Grading.keys)

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
        if isinstance(default, dict):
            self.settings.update({f"defaultTest.{key}": _canonical(default[key]) for key in TEST_GRADING_KEYS
                                  if key in default})
        tests = data.get("tests")
        if isinstance(tests, list):
            for index, test in enumerate(tests):
                loc: Loc = ("tests", index)
                if isinstance(test, dict) and "path" not in test:
                    name = _test_key(index, test)
                    self.tests.append(name)
                    self.settings.update({f"{name}.{key}": _canonical(test[key]) for key in TEST_GRADING_KEYS
                                          if key in test})
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
            others = {key: value for key, value in entry.items() if key not in READ_KEYS}
            self.keys[at] = _canonical(others) if others else ""


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


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=str, ensure_ascii=False)


def _test_key(index: int, test: dict[str, Any]) -> str:
    """A test's name across versions: its description, else its position."""
    description = test.get("description")
    return f"test '{description}'" if isinstance(description, str) and description.strip() else f"test {index + 1}"


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
    tests = located.data.get("tests")
    scopes: dict[str, str | tuple[str, ...]] = {}
    keys: dict[str, str] = {}
    for assertion in assertions:
        locs = (assertion.loc, *assertion.others)
        if any(loc[0] == "defaultTest" for loc in locs):
            scopes[assertion.id] = ALL_TESTS
        else:
            scopes[assertion.id] = tuple(sorted({_test_key(int(loc[1]), tests[int(loc[1])]) for loc in locs}))
        written = sorted({reader.keys[loc] for loc in locs})
        keys[assertion.id] = written[0] if len(written) == 1 else _canonical(written)
    grading = Grading(scopes, keys, tuple(reader.tests), reader.settings)
    return PromptfooChecklist(assertions, reader.not_gated,
                              description if isinstance(description, str) and description.strip() else None,
                              located.line_of(("description",)) if isinstance(description, str) else None,
                              problems, grading)


def grading_changes(base: Grading, head: Grading) -> list[str]:
    """Where `head` grades the checks both versions have more leniently than promptfoo would
    grade `base`, or otherwise than the gate can weigh: a check no longer written for a test it
    was (moved out of `defaultTest`, or out of a test that remains), other keys on its assertion
    (`weight`, `threshold`, `provider`, `rubricPrompt`, ...), or a test's `threshold` or `options`
    (or `defaultTest.options`) added or changed. Each is a sentence for reviewers."""
    out = []
    remaining = set(head.tests)
    for check_id, before in base.scopes.items():
        after = head.scopes.get(check_id)
        if after is None or isinstance(after, str):  # deleted (gated as such), or asked of every test
            continue
        if before == ALL_TESTS:
            out.append(f"moves check '{check_id}' out of defaultTest into {_listed(after)} only: promptfoo no "
                       "longer asks it of every test's output")
            continue
        lost = sorted((set(before) & remaining) - set(after))
        if lost:
            out.append(f"no longer asks check '{check_id}' in {_listed(tuple(lost))}")
    for check_id, before_keys in base.keys.items():
        after_keys = head.keys.get(check_id)
        if after_keys is not None and after_keys != before_keys:
            shown = after_keys or "none"
            out.append(f"changes how promptfoo grades check '{check_id}' (its assertion's other keys: "
                       f"{_short(before_keys or 'none')} -> {_short(shown)})")
    for key, value in head.settings.items():
        test = key.rpartition(".")[0]
        before_value = base.settings.get(key)
        if before_value != value:
            out.append(f"{'sets' if before_value is None else 'changes'} {key} ({_short(value)}), which changes how "
                       "promptfoo passes " + ("every test" if test == "defaultTest" else test))
    for key in base.settings:
        test = key.rpartition(".")[0]
        # (a test's threshold removed: every assertion must pass again, which is stricter)
        if key not in head.settings and not key.endswith(".threshold") and (test == "defaultTest" or test in remaining):
            out.append(f"removes {key}, which changes how promptfoo grades "
                       + ("every test" if test == "defaultTest" else test))
    return out


def _listed(tests: tuple[str, ...]) -> str:
    return ", ".join(tests[:5]) + (f" and {len(tests) - 5} more" if len(tests) > 5 else "")


def _short(text: str, limit: int = 120) -> str:
    return text if len(text) <= limit else text[:limit - 1] + "…"


def git_blob_id(text: str) -> str:
    """The id git gives this text as a blob (what `git hash-object` prints), first 7 digits."""
    data = text.encode("utf-8")
    return hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()[:7]
