"""Load a rubric YAML file into a validated `Rubric`, with errors naming file and line."""

from __future__ import annotations

import datetime
import re
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import ValidationError
from pydantic_core import ErrorDetails

from rubric_gate.errors import InputError
from rubric_gate.rubric.model import KNOWN_KEYS, Rubric
from rubric_gate.sources import LocatedYaml, SourceText, load_located_yaml, read_source


@dataclass
class RubricDocument:
    """A rubric plus where it came from: for messages, annotations and relative paths."""

    rubric: Rubric
    source: SourceText
    check_lines: dict[str, int] = field(default_factory=dict)

    @property
    def display(self) -> str:
        return self.source.display

    @property
    def repo_path(self) -> str | None:
        """Path inside the repository, when known (annotations need it)."""
        if self.source.repo_path is not None:
            return self.source.repo_path
        return str(self.source.path) if self.source.path is not None else None


def _known_keys_for(loc: tuple) -> list[str]:
    if loc and loc[0] == "checks":
        return KNOWN_KEYS["check"]
    if loc and loc[0] == "aggregation":
        return KNOWN_KEYS["aggregation"]
    return KNOWN_KEYS["rubric"]


# Pydantic names the branch of a union that failed ("str", "list[str]", ...): not a key the user wrote.
_UNION_BRANCH = re.compile(r"^(str|int|float|bool|none|list\[.*\]|dict\[.*\])$")


def _describe(error: ErrorDetails) -> tuple[tuple, str]:
    loc = tuple(
        part for part in error["loc"]
        if not (isinstance(part, str) and (part.startswith(("literal[", "MaxFailures", "function-")) or _UNION_BRANCH.match(part)))
    )
    kind = error["type"]
    if kind == "extra_forbidden":
        key = str(loc[-1])
        import difflib  # a misspelt key only: every load imports this module

        hint = difflib.get_close_matches(key, _known_keys_for(loc[:-1]), n=1)
        suggestion = f" (did you mean '{hint[0]}'?)" if hint else f" (known keys: {', '.join(_known_keys_for(loc[:-1]))})"
        return loc, f"unknown key '{key}'{suggestion}"
    field_name = ".".join(str(p) for p in loc) or "rubric"
    if kind == "missing":
        return loc, f"missing required key '{loc[-1]}'"
    if loc and loc[-1] == "source" and loc[0] == "checks":
        return loc, f"{field_name}: must be a string or a list of strings"
    if loc == ("version",):
        return loc, "version must be a string or a number"
    message = error["msg"]
    if message.startswith("Value error, "):
        message = message[len("Value error, "):]
    return loc, f"{field_name}: {message}"


def rubric_problems(located: LocatedYaml, display: str) -> tuple[Rubric | None, dict[str, int], list[InputError]]:
    """Validate a parsed rubric and collect every problem, in file order (first = what loading reports)."""
    data = located.data
    if not isinstance(data, dict):
        return None, {}, [InputError(display, "a rubric must be a mapping with keys id, version, task, checks, ...", 1)]
    version = data.get("version")
    if isinstance(version, int | float | datetime.date) and not isinstance(version, bool):
        # Shown as written: YAML would turn 1.10 into 1.1, 010 into 8 and a date into a date.
        data = {**data, "version": located.raw.get(("version",), str(version))}
    try:
        rubric = Rubric.model_validate(data)
    except ValidationError as exc:
        errors = exc.errors()
        # Union branches for `aggregation` report twice; show the most specific one.
        errors.sort(key=lambda e: (-len(e["loc"]), e["type"] != "extra_forbidden"))
        errors.sort(key=lambda e: located.line_of(tuple(e["loc"])) or 0)
        # A misspelt required key (`tsak:`) is both unknown and missing: name the line the user
        # wrote, with the "did you mean", rather than the missing key with no line.
        errors.sort(key=lambda e: e["type"] != "extra_forbidden")
        problems: list[InputError] = []
        seen: set[tuple] = set()
        for error in errors:
            loc, what = _describe(error)
            if loc and loc[0] == "aggregation" and error["type"] != "extra_forbidden":
                loc, what = ("aggregation",), "aggregation must be 'all-pass' or {max_failures: K} with K >= 0"
            if loc in seen:  # another branch of the same union
                continue
            seen.add(loc)
            problems.append(InputError(display, what, located.line_of(loc)))
        return None, {}, problems + _duplicate_ids(located, display)[1]
    check_lines, problems = _duplicate_ids(located, display)
    if rubric.max_failures >= len(rubric.checks):
        problems.append(InputError(display, f"aggregation max_failures is {rubric.max_failures} but the rubric has "
                                   f"{len(rubric.checks)} check(s): no output could ever fail",
                                   located.line_of(("aggregation",))))
    # Annotations for a change of aggregation go on its line (the gate reports it as this id).
    aggregation_line = located.line_of(("aggregation",))
    if aggregation_line and "(aggregation)" not in check_lines:
        check_lines["(aggregation)"] = aggregation_line
    return (None if problems else rubric), check_lines, problems


def _duplicate_ids(located: LocatedYaml, display: str) -> tuple[dict[str, int], list[InputError]]:
    """Line of each check id, and an error for each id used twice (read from the raw data, so it
    is found even when another key of the rubric is invalid)."""
    check_lines: dict[str, int] = {}
    problems: list[InputError] = []
    checks = located.data.get("checks") if isinstance(located.data, dict) else None
    for index, check in enumerate(checks if isinstance(checks, list) else []):
        check_id = check.get("id") if isinstance(check, dict) else None
        if not isinstance(check_id, str):
            continue
        line = located.line_of(("checks", index))
        if check_id in check_lines:
            problems.append(InputError(
                display, f"duplicate check id '{check_id}' (first at line {check_lines[check_id]})", line
            ))
            continue
        check_lines[check_id] = line or 0
    return check_lines, problems


def rubric_from_yaml(located: LocatedYaml, display: str) -> tuple[Rubric, dict[str, int]]:
    rubric, check_lines, problems = rubric_problems(located, display)
    if problems:
        raise problems[0]
    assert rubric is not None
    return rubric, check_lines


def load_rubric(spec: str | Path, cwd: Path | None = None) -> RubricDocument:
    """Load a rubric from a path or `REF:PATH`."""
    source = read_source(spec, cwd)
    located = load_located_yaml(source.text, source.display)
    rubric, check_lines = rubric_from_yaml(located, source.display)
    return RubricDocument(rubric, source, check_lines)


def parse_rubric_text(text: str, display: str, repo_path: str | None = None) -> RubricDocument:
    """Load a rubric from text already in memory (e.g. fetched from the GitHub API)."""
    source = SourceText(display, text, None, repo_path=repo_path)
    located = load_located_yaml(text, display)
    rubric, check_lines = rubric_from_yaml(located, display)
    return RubricDocument(rubric, source, check_lines)
