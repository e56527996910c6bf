"""`.rubric-gate.yaml`: the repository's rubric-gate settings, read at the same revision as the
file they describe.

Its `promptfoo` section maps each gated promptfoo config (its path from the repository root) to
what a rubric file would say about itself: the rubric id, the calibration set and verdict store,
and optionally the task (default: the config's `description`), the version (default: the
config's git blob id), a live judge and the checks that are frozen.

    promptfoo:
      evals/promptfooconfig.yaml:
        id: support-answers
        calibration: calibration/support-answers.jsonl
        verdicts: calibration/support-answers.verdicts.jsonl
"""

from __future__ import annotations

import difflib
import posixpath
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from rubric_gate.errors import InputError
from rubric_gate.sources.yaml_lines import LocatedYaml, load_located_yaml

MAPPING_FILE = ".rubric-gate.yaml"


class PromptfooEntry(BaseModel):
    """How one promptfoo config is gated."""

    model_config = ConfigDict(extra="forbid")

    id: Annotated[str, Field(min_length=1, description="The rubric's name in reports.")]
    calibration: Annotated[str, Field(min_length=1, description="Path of the labeled calibration set (JSONL).")]
    verdicts: Annotated[str, Field(min_length=1, description="Path of the verdict store (JSONL).")]
    task: Annotated[str | None, Field(
        min_length=1, description="What the graded output must do (the judge reads it). Default: the config's "
                                  "description.")] = None
    version: Annotated[str | None, Field(description="Shown in reports. Default: the config's git blob id.")] = None
    judge: Annotated[str | None, Field(description="Default live judge, PROVIDER:MODEL.")] = None
    frozen: Annotated[list[str], Field(description="Ids of checks that cannot be deleted, reworded or unfrozen.")] = []

    @field_validator("version", mode="before")
    @classmethod
    def _version_as_text(cls, value: Any) -> Any:
        if isinstance(value, bool):
            raise ValueError("version must be a string or a number")
        return str(value) if isinstance(value, int | float) else value


class RepositorySettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    promptfoo: dict[str, PromptfooEntry] = {}


_KNOWN = {"settings": list(RepositorySettings.model_fields), "entry": list(PromptfooEntry.model_fields)}


def normal_path(path: str) -> str:
    """A repository path as the mapping keys it: forward slashes, no `./`, no `..` left over."""
    return posixpath.normpath(path.replace("\\", "/")).removeprefix("./")


def _message(loc: tuple, kind: str, msg: str, data: dict) -> str:
    where = ".".join(str(p) for p in loc)
    if kind == "extra_forbidden":
        known = _KNOWN["entry" if len(loc) > 2 else "settings"]
        hint = difflib.get_close_matches(str(loc[-1]), known, n=1)
        return f"unknown key '{loc[-1]}'" + (f" (did you mean '{hint[0]}'?)" if hint else
                                            f" (known keys: {', '.join(known)})")
    if kind == "missing":
        return f"{'.'.join(str(p) for p in loc[:-1])}: missing required key '{loc[-1]}'"
    return f"{where}: {msg.removeprefix('Value error, ')}"


def parse_settings(text: str, display: str) -> tuple[RepositorySettings, LocatedYaml]:
    """`.rubric-gate.yaml` through the one YAML reader; problems name its line."""
    located = load_located_yaml(text, display)
    data = located.data
    if not isinstance(data, dict):
        raise InputError(display, "rubric-gate's settings must be a mapping (e.g. `promptfoo: {PATH: {...}}`)", 1)
    try:
        settings = RepositorySettings.model_validate(data)
    except ValidationError as exc:
        errors = sorted(exc.errors(), key=lambda e: located.line_of(tuple(e["loc"])) or 0)
        # a misspelt required key is both unknown and missing: name the line written, with the hint
        errors.sort(key=lambda e: e["type"] != "extra_forbidden")
        first = errors[0]
        raise InputError(display, _message(tuple(first["loc"]), first["type"], first["msg"], data),
                         located.line_of(tuple(first["loc"]))) from None
    normal: dict[str, str] = {}
    for key in settings.promptfoo:
        path = normal_path(key)
        if path in normal:
            raise InputError(display, f"promptfoo: '{key}' and '{normal[path]}' are the same file",
                             located.line_of(("promptfoo", key)))
        normal[path] = key
    return settings, located


def find_entry(settings: RepositorySettings, repo_path: str) -> tuple[str, PromptfooEntry] | None:
    """The entry for the promptfoo config at `repo_path` (as written in the file, and the entry)."""
    wanted = normal_path(repo_path)
    for key, entry in settings.promptfoo.items():
        if normal_path(key) == wanted:
            return key, entry
    return None
