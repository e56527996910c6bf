"""Load a rubric YAML file into a validated `Rubric`, with errors naming file and line."""

from __future__ import annotations

import datetime
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import ValidationError
from pydantic_core import ErrorDetails

from rubric_gate.errors import InputError
from rubric_gate.rubric.model import KNOWN_KEYS, Rubric
from rubric_gate.rubric.promptfoo import (
    Grading,
    NotGated,
    git_blob_id,
    looks_like_promptfoo,
    read_checklist,
)
from rubric_gate.sources import LocatedYaml, SourceText, load_located_yaml, read_source
from rubric_gate.sources.files import decode_text
from rubric_gate.sources.yaml_lines import Loc

# A file beside the rubric at the same revision (the commit, the index or the work tree):
# repository path -> (name to show, text), or None when there is no such file.
Sibling = Callable[[str], tuple[str, str] | None]


@dataclass
class RubricDocument:
    """A rubric plus where it came from: for messages, annotations and relative paths."""

    rubric: Rubric
    source: SourceText
    check_lines: dict[str, int] = field(default_factory=dict)
    # A promptfoo config read in place ("promptfoo"), or a rubric file ("rubric").
    kind: str = "rubric"
    # promptfoo: where each check's assertion is (a repair suggestion replaces it), and what
    # the config holds that the gate leaves alone.
    check_locs: dict[str, Loc] = field(default_factory=dict)
    repeated_locs: dict[str, tuple[Loc, ...]] = field(default_factory=dict)  # the same text written again
    not_gated: tuple[NotGated, ...] = ()
    grading: Grading | None = None  # how promptfoo grades the checks besides their texts
    # promptfoo: the settings file its calibration, verdicts and task come from, and their lines.
    settings_display: str | None = None
    key_lines: dict[str, int] = field(default_factory=dict)

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


def document_problems(located: LocatedYaml, source: SourceText,
                      siblings: Callable[[], tuple[str, Sibling]] | None = None,
                      ) -> tuple[RubricDocument | None, list[InputError], list[InputError]]:
    """The one reader of a rubric file or a promptfoo config: the document, its errors (file
    order; the first is what loading reports) and its warnings (lint shows them).

    `siblings` gives the file's repository path and a reader of files at the same revision,
    asked only for a promptfoo config (its settings are in `.rubric-gate.yaml`)."""
    if looks_like_promptfoo(located.data):
        try:
            return _promptfoo_document(located, source, siblings)
        except InputError as exc:
            return None, [exc], []
    rubric, check_lines, problems = rubric_problems(located, source.display)
    if rubric is None:
        return None, problems, []
    key_lines = {key: line for key in KNOWN_KEYS["rubric"] if (line := located.lines.get((key,))) is not None}
    locs: dict[str, Loc] = {check.id: ("checks", index) for index, check in enumerate(rubric.checks)}
    return RubricDocument(rubric, source, check_lines, check_locs=locs, key_lines=key_lines), [], []


def _promptfoo_document(located: LocatedYaml, source: SourceText,
                        siblings: Callable[[], tuple[str, Sibling]] | None,
                        ) -> tuple[RubricDocument | None, list[InputError], list[InputError]]:
    display = source.display
    # (a promptfoo config only: a rubric file loads no settings code)
    from rubric_gate.rubric.mapping import MAPPING_FILE, find_entry, normal_path, parse_settings

    checklist = read_checklist(located, display)
    how = (f"name its calibration set and verdicts in {MAPPING_FILE} at the repository root, under "
           "`promptfoo: {PATH: {id, calibration, verdicts}}` (`rubric-gate init --from promptfoo PATH` writes it)")
    if siblings is None:
        raise InputError(display, f"a promptfoo config: gate it from inside its repository ({how})", 1)
    repo_path, read = siblings()
    found = read(MAPPING_FILE)
    if found is None:
        raise InputError(display, f"a promptfoo config with no rubric-gate settings: {how}", 1)
    settings_display, text = found
    settings, settings_located = parse_settings(text, settings_display)
    entry_found = find_entry(settings, repo_path)
    if entry_found is None:
        raise InputError(display, f"a promptfoo config that {settings_display} does not name: add "
                         f"`{normal_path(repo_path)}` under its `promptfoo:` section with id, calibration and verdicts",
                         1)
    key, entry = entry_found
    entry_loc = ("promptfoo", key)
    task = entry.task or checklist.description
    if task is None:
        raise InputError(settings_display, f"promptfoo: {key}: no task for the judge: set `task:` here, or "
                         f"`description:` in {display}", settings_located.line_of(entry_loc))
    if not checklist.assertions:
        raise InputError(display, "no llm-rubric assertion to gate (defaultTest and the inline tests carry none)", 1)
    frozen = set(entry.frozen)
    checks = [{"id": a.id, "text": a.text, **({"frozen": True} if a.id in frozen else {})}
              for a in checklist.assertions]
    data = {"id": entry.id, "version": entry.version or git_blob_id(source.text), "task": task,
            "calibration": entry.calibration, "verdicts": entry.verdicts, "checks": checks,
            **({"judge": entry.judge} if entry.judge is not None else {})}
    try:
        rubric = Rubric.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = tuple(first["loc"])
        _, what = _describe(first)
        if loc and loc[0] == "checks" and isinstance(loc[1], int):
            raise InputError(display, what, checklist.assertions[loc[1]].line) from None
        raise InputError(settings_display, f"promptfoo: {key}: {what}",
                         settings_located.line_of((*entry_loc, *loc))) from None
    key_lines = {name: line for name in ("id", "version", "task", "calibration", "verdicts", "judge", "frozen")
                 if (line := settings_located.lines.get((*entry_loc, name))) is not None}
    if entry.task is None and checklist.description_line is not None:
        key_lines["task"] = checklist.description_line
    warnings = list(checklist.problems)
    ids = {a.id for a in checklist.assertions}
    for index, check_id in enumerate(entry.frozen):
        if check_id not in ids:
            warnings.append(InputError(settings_display, f"promptfoo: {key}: frozen lists '{check_id}', which no "
                                       f"llm-rubric assertion of {display} has",
                                       settings_located.line_of((*entry_loc, "frozen", index))))
    document = RubricDocument(
        rubric, source, {a.id: a.line for a in checklist.assertions}, kind="promptfoo",
        check_locs={a.id: a.loc for a in checklist.assertions}, not_gated=tuple(checklist.not_gated),
        repeated_locs={a.id: a.others for a in checklist.assertions if a.others}, grading=checklist.grading,
        settings_display=settings_display, key_lines=key_lines,
    )
    return document, [], warnings


def read_document(located: LocatedYaml, source: SourceText,
                  siblings: Callable[[], tuple[str, Sibling]] | None = None) -> RubricDocument:
    document, problems, _ = document_problems(located, source, siblings)
    if problems:
        raise problems[0]
    assert document is not None
    return document


def git_siblings(ref: str, cwd: Path | None) -> Sibling:
    """Files at `ref` (`""`: the index), read without touching the work tree; None when absent."""
    def read(path: str) -> tuple[str, str] | None:
        import subprocess  # a promptfoo config's settings only: every rubric load imports this module

        spec = f"{ref}:{path}"
        proc = subprocess.run(["git", "cat-file", "blob", spec], cwd=cwd, capture_output=True, check=False)
        if proc.returncode != 0:
            return None
        return (path + " (staged)" if ref == "" else spec), decode_text(proc.stdout, spec)
    return read


def worktree_siblings(root: Path, shown: Path | None = None) -> Sibling:
    """Files under `root`, named relative to `shown` (default: as the repository path)."""
    def read(path: str) -> tuple[str, str] | None:
        target = root / path
        if not target.is_file():
            return None
        display = str(target.relative_to(shown)) if shown is not None and target.is_relative_to(shown) else path
        return display, decode_text(target.read_bytes(), display)
    return read


def source_siblings(source: SourceText, cwd: Path | None) -> Callable[[], tuple[str, Sibling]]:
    def resolve() -> tuple[str, Sibling]:
        if source.ref is not None and source.repo_path is not None:
            return source.repo_path, git_siblings(source.ref, cwd)
        import subprocess

        assert source.path is not None
        path = source.path.resolve()
        proc = subprocess.run(["git", "rev-parse", "--show-toplevel"], cwd=path.parent, capture_output=True,
                              text=True, check=False)
        root = Path(proc.stdout.strip()) if proc.returncode == 0 and proc.stdout.strip() else (cwd or Path.cwd())
        root = root.resolve()
        repo_path = path.relative_to(root).as_posix() if path.is_relative_to(root) else str(source.path)
        here = (cwd or Path.cwd()).resolve()
        return repo_path, worktree_siblings(root, here if root.is_relative_to(here) else None)
    return resolve


def load_rubric(spec: str | Path, cwd: Path | None = None) -> RubricDocument:
    """Load a rubric (or a promptfoo config gated as one) from a path or `REF:PATH`."""
    source = read_source(spec, cwd)
    located = load_located_yaml(source.text, source.display)
    return read_document(located, source, source_siblings(source, cwd))


def parse_rubric_text(text: str, display: str, repo_path: str | None = None,
                      siblings: Sibling | None = None) -> RubricDocument:
    """Load a rubric from text already in memory (e.g. fetched from the GitHub API); a promptfoo
    config needs `repo_path` and `siblings`, the reader of files at the same revision."""
    source = SourceText(display, text, None, repo_path=repo_path)
    located = load_located_yaml(text, display)
    found = (lambda: (repo_path, siblings)) if repo_path is not None and siblings is not None else None
    return read_document(located, source, found)
