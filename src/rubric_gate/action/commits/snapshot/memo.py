"""Each blob parsed once per run: rubric YAML and calibration sets by git blob id.

A blob id is a hash of the file's bytes, so one parse serves every commit, every snapshot and
every rubric that holds the same bytes (the merge base, the base tip and the head alike). What
is kept does not depend on where the bytes were read: the display a document or an error
names (`abc1234:rubrics/x.yaml`) is put on when it is handed out. (Verdict stores are parsed
once per blob by `verdicts.blobs`, which also extends a parsed blob by appended lines.)

A promptfoo config read in place is a rubric only with its entry in `.rubric-gate.yaml`: its
document depends on the config's blob, the settings file's blob and the config's own path (the
entry is found by path), so it is kept under all three.
"""

from __future__ import annotations

import posixpath
from collections import Counter, OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Generic, NoReturn, TypeVar

from rubric_gate.calibration import CalibrationSet, parse_calibration
from rubric_gate.calibration.model import CalibrationItem
from rubric_gate.errors import InputError
from rubric_gate.rubric import Rubric, RubricDocument
from rubric_gate.rubric.load import document_problems, rubric_from_yaml
from rubric_gate.rubric.mapping import (
    MAPPING_FILE,
    PromptfooEntry,
    RepositorySettings,
    normal_path,
    parse_settings,
)
from rubric_gate.rubric.promptfoo import looks_like_promptfoo
from rubric_gate.sources import LocatedYaml, SourceText, load_located_yaml

T = TypeVar("T")

MAX_RUBRICS = 4096  # distinct rubric blobs kept per process (small: a few KB each)
MAX_CALIBRATIONS = 64  # distinct calibration sets (large: up to 100k items each)

# The scalar keys other readers act on before (or without) validating the rubric: pairing a
# rewrite, the judge of an edit, the files its labels and verdicts live in, its task.
RUBRIC_KEYS = ("id", "calibration", "verdicts", "judge", "task")


@dataclass(frozen=True)
class _Failed:
    """An input error, kept without the display it was first raised under."""

    what: str
    line: int | None

    def raise_as(self, display: str) -> NoReturn:
        raise InputError(display, self.what, self.line)


class _Lru(Generic[T]):
    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._entries: OrderedDict[str, T | _Failed] = OrderedDict()

    def get(self, blob_id: str, display: str, build: Callable[[], T]) -> T:
        if blob_id in self._entries:
            self._entries.move_to_end(blob_id)
            found = self._entries[blob_id]
        else:
            try:
                found = build()
            except InputError as exc:
                found = _Failed(exc.what, exc.line)
            self._entries[blob_id] = found
            if len(self._entries) > self.limit:
                self._entries.popitem(last=False)
        if isinstance(found, _Failed):
            found.raise_as(display)
        return found

    def clear(self) -> None:
        self._entries.clear()


# Where a promptfoo document built once names its two files: replaced by the snapshot's own
# displays (`abc1234:evals/x.yaml`, `abc1234:.rubric-gate.yaml`) when it is handed out.
_CONFIG = "\x00rubric-gate:config\x00"
_SETTINGS = "\x00rubric-gate:settings\x00"


@dataclass(frozen=True)
class SettingsFile:
    """`.rubric-gate.yaml` as one snapshot has it (None where it has none)."""

    blob_id: str
    text: str
    display: str


@dataclass(frozen=True)
class _FailedIn:
    """A promptfoo document's input error, in either of its two files, without their displays."""

    in_settings: bool
    what: str
    line: int | None

    def raise_as(self, display: str, settings_display: str) -> NoReturn:
        what = self.what.replace(_CONFIG, display).replace(_SETTINGS, settings_display)
        raise InputError(settings_display if self.in_settings else display, what, self.line)


def _shown(document: RubricDocument, display: str, settings_display: str, repo_path: str | None) -> RubricDocument:
    return replace(document, source=SourceText(display, document.source.text, None, repo_path=repo_path),
                   settings_display=settings_display, check_lines=dict(document.check_lines))


@dataclass(frozen=True)
class _ParsedRubric:
    located: LocatedYaml | None  # None: the YAML did not load (then `yaml_error`)
    yaml_error: _Failed | None
    keys: dict[str, str]


class ParseMemo:
    """Parsed rubric and calibration blobs by blob id; `parses` counts the parses it ran, by
    (kind, blob id), for the tests and benchmarks that hold it to one each."""

    def __init__(self) -> None:
        self._yaml: _Lru[_ParsedRubric] = _Lru(MAX_RUBRICS)
        self._rubrics: _Lru[tuple[Rubric, dict[str, int]]] = _Lru(MAX_RUBRICS)
        self._calibrations: _Lru[tuple[CalibrationItem, ...]] = _Lru(MAX_CALIBRATIONS)
        self._settings: _Lru[RepositorySettings] = _Lru(MAX_CALIBRATIONS)
        # promptfoo documents by (config blob, settings blob, path): see the module's docstring
        self._promptfoo: OrderedDict[tuple[str, str, str], RubricDocument | _FailedIn] = OrderedDict()
        self.parses: Counter[tuple[str, str]] = Counter()

    def clear(self) -> None:
        for lru in (self._yaml, self._rubrics, self._calibrations, self._settings):
            lru.clear()
        self._promptfoo.clear()
        self.parses.clear()

    def _parsed_yaml(self, blob_id: str, text: str, display: str) -> _ParsedRubric:
        def parse() -> _ParsedRubric:
            self.parses["yaml", blob_id] += 1
            try:
                located = load_located_yaml(text, display)
            except InputError as exc:
                return _ParsedRubric(None, _Failed(exc.what, exc.line), {})
            return _ParsedRubric(located, None, _keys(located.data))

        return self._yaml.get(blob_id, display, parse)

    def is_promptfoo(self, blob_id: str, text: str, display: str) -> bool:
        """A promptfoo config (read in place with its settings), not a rubric file."""
        located = self._parsed_yaml(blob_id, text, display).located
        return located is not None and looks_like_promptfoo(located.data)

    def settings(self, found: SettingsFile) -> RepositorySettings:
        """`.rubric-gate.yaml` validated (an InputError naming its line when it does not load)."""
        def parse() -> RepositorySettings:
            self.parses["settings", found.blob_id] += 1
            return parse_settings(found.text, found.display)[0]

        return self._settings.get(found.blob_id, found.display, parse)

    def configs(self, found: SettingsFile | None) -> dict[str, PromptfooEntry]:
        """The promptfoo configs the settings name, by normalised path ({} without settings)."""
        if found is None:
            return {}
        return {normal_path(key): entry for key, entry in self.settings(found).promptfoo.items()}

    def rubric_keys(self, blob_id: str, text: str, display: str, path: str | None = None,
                    settings: Callable[[], SettingsFile | None] | None = None) -> dict[str, str]:
        """The rubric's scalar `id`, `calibration`, `verdicts`, `judge` and `task` ({} when its
        YAML does not load): read by the one YAML loader, so they are the keys the gate acts on.
        A promptfoo config's come from its entry in the settings (`path`, `settings`; {} when
        they do not load or do not name it), its task defaulting to its `description`."""
        parsed = self._parsed_yaml(blob_id, text, display)
        if parsed.located is None or not looks_like_promptfoo(parsed.located.data):
            return dict(parsed.keys)
        try:
            entry = self.configs(settings() if settings is not None else None).get(normal_path(path or ""))
        except InputError:
            return {}
        if entry is None:
            return {}
        data = parsed.located.data
        description = data.get("description")
        task = entry.task or (description if isinstance(description, str) and description.strip() else None)
        return _keys({"id": entry.id, "calibration": entry.calibration, "verdicts": entry.verdicts,
                      "judge": entry.judge, "task": task})

    def rubric(self, blob_id: str, text: str, display: str, repo_path: str | None = None, *,
               path: str | None = None, settings: Callable[[], SettingsFile | None] | None = None,
               settings_display: str = MAPPING_FILE) -> RubricDocument:
        """The validated rubric (an InputError naming `display` and the line when it does not load).
        A promptfoo config is read with `settings` (`.rubric-gate.yaml` at the same commit, asked
        only for a config) and its repository `path`, the key of its entry there."""
        if self.is_promptfoo(blob_id, text, display):
            found = settings() if settings is not None else None
            return self._promptfoo_document(blob_id, text, display, repo_path, path or repo_path or "", found,
                                            found.display if found is not None else settings_display)

        def validate() -> tuple[Rubric, dict[str, int]]:
            parsed = self._parsed_yaml(blob_id, text, display)
            if parsed.located is None:
                assert parsed.yaml_error is not None
                parsed.yaml_error.raise_as(display)
            assert parsed.located is not None
            self.parses["rubric", blob_id] += 1
            return rubric_from_yaml(parsed.located, display)

        rubric, check_lines = self._rubrics.get(blob_id, display, validate)
        return RubricDocument(rubric, SourceText(display, text, None, repo_path=repo_path), dict(check_lines))

    def _promptfoo_document(self, blob_id: str, text: str, display: str, repo_path: str | None, path: str,
                            settings: SettingsFile | None, settings_display: str) -> RubricDocument:
        key = (blob_id, settings.blob_id if settings is not None else "", normal_path(path))
        if key in self._promptfoo:
            self._promptfoo.move_to_end(key)
            found = self._promptfoo[key]
        else:
            self.parses["promptfoo", "\0".join(key)] += 1
            located = self._parsed_yaml(blob_id, text, display).located
            assert located is not None

            def read(wanted: str) -> tuple[str, str] | None:
                return (_SETTINGS, settings.text) if wanted == MAPPING_FILE and settings is not None else None

            document, problems, _ = document_problems(located, SourceText(_CONFIG, text, None, repo_path=path),
                                                      lambda: (key[2], read))
            if problems:
                found = _FailedIn(problems[0].path == _SETTINGS, problems[0].what, problems[0].line)
            else:
                assert document is not None
                found = document
            self._promptfoo[key] = found
            if len(self._promptfoo) > MAX_RUBRICS:
                self._promptfoo.popitem(last=False)
        if isinstance(found, _FailedIn):
            found.raise_as(display, settings_display)
        return _shown(found, display, settings_display, repo_path)

    def calibration(self, blob_id: str, text: str, display: str) -> CalibrationSet:
        """Every item of the calibration set (all splits)."""
        def parse() -> tuple[CalibrationItem, ...]:
            self.parses["calibration", blob_id] += 1
            return parse_calibration(SourceText(display, text, None)).items

        return CalibrationSet(self._calibrations.get(blob_id, display, parse), display)


def _keys(data: object) -> dict[str, str]:
    if not isinstance(data, dict):
        return {}
    keys = {key: str(data[key]) for key in RUBRIC_KEYS
            if isinstance(data.get(key), str | int | float) and not isinstance(data.get(key), bool)}
    # Normalised (`./a//b` is `a/b`) so that they compare equal to the paths git lists.
    for key in ("calibration", "verdicts"):
        if keys.get(key, "").strip():
            keys[key] = posixpath.normpath(keys[key])
    return keys


_default: ParseMemo | None = None


def default_memo() -> ParseMemo:
    """The process's memo: blob ids are content hashes, so it is never stale."""
    global _default
    if _default is None:
        _default = ParseMemo()
    return _default
