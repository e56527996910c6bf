"""Each blob parsed once per run: rubric YAML and calibration sets by git blob id.

A blob id is a hash of the file's bytes, so one parse serves every commit, every snapshot and
every rubric that holds the same bytes (the merge base, the base tip and the head alike). What
is kept does not depend on where the bytes were read: the display a document or an error
names (`abc1234:rubrics/x.yaml`) is put on when it is handed out. (Verdict stores are parsed
once per blob by `verdicts.blobs`, which also extends a parsed blob by appended lines.)
"""

from __future__ import annotations

import posixpath
from collections import Counter, OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, NoReturn, TypeVar

from rubric_gate.calibration import CalibrationSet, parse_calibration
from rubric_gate.calibration.model import CalibrationItem
from rubric_gate.errors import InputError
from rubric_gate.rubric import Rubric, RubricDocument
from rubric_gate.rubric.load import rubric_from_yaml
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
        self.parses: Counter[tuple[str, str]] = Counter()

    def clear(self) -> None:
        for lru in (self._yaml, self._rubrics, self._calibrations):
            lru.clear()
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

    def rubric_keys(self, blob_id: str, text: str, display: str) -> dict[str, str]:
        """The rubric's scalar `id`, `calibration`, `verdicts`, `judge` and `task` ({} when its
        YAML does not load): read by the one YAML loader, so they are the keys the gate acts on."""
        return dict(self._parsed_yaml(blob_id, text, display).keys)

    def rubric(self, blob_id: str, text: str, display: str, repo_path: str | None = None) -> RubricDocument:
        """The validated rubric (an InputError naming `display` and the line when it does not load)."""
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
