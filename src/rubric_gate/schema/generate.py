"""Build the JSON Schemas from the models, so the editor's idea of a rubric cannot drift from ours."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import BaseModel
from pydantic.json_schema import GenerateJsonSchema, JsonSchemaValue
from pydantic_core import core_schema

from rubric_gate.calibration.model import CalibrationItem
from rubric_gate.rubric.model import Rubric
from rubric_gate.schema.report import RunReport
from rubric_gate.verdicts.model import Verdict

DRAFT = "https://json-schema.org/draft/2020-12/schema"
# Each schema's `$id`: where the committed copy on the default branch is served.
ID_BASE = "https://raw.githubusercontent.com/rubric-gate/rubric-gate/main/schema/"


class _EnumLiterals(GenerateJsonSchema):
    """Literals as `enum` (pydantic writes a one-value literal as `const`): editors complete enums."""

    def literal_schema(self, schema: core_schema.LiteralSchema) -> JsonSchemaValue:
        result = super().literal_schema(schema)
        if "const" in result:
            result["enum"] = [result.pop("const")]
        return result


def _schema(model: type[BaseModel], title: str, name: str) -> dict[str, Any]:
    body = model.model_json_schema(schema_generator=_EnumLiterals)
    body["title"] = title
    return {"$schema": DRAFT, "$id": ID_BASE + name, **body}


def rubric_schema() -> dict[str, Any]:
    return _schema(Rubric, "rubric-gate rubric", "rubric.schema.json")


def calibration_item_schema() -> dict[str, Any]:
    return _schema(CalibrationItem, "rubric-gate calibration item (one line of the JSONL file)",
                   "calibration-item.schema.json")


# The verdict model's fields, described for editors here (the model file is being reworked for
# "n/a" answers; move these into Field(description=...) there once it settles). A test fails
# when a field has no description.
VERDICT_FIELDS = {
    "item": "Id of the calibration item judged (its `id` in the calibration JSONL).",
    "check_text": "The check's text exactly as judged: a reworded check needs a new verdict.",
    "answer": "The judge's answer to the check for this item.",
    "judge": "PROVIDER:MODEL that answered (absent for a verdict recorded by hand).",
    "prompt": "Version of the prompt template the judge saw.",
    "item_hash": "Content hash of the item as judged: an edited item needs a new verdict.",
    "task_hash": "Hash of the rubric's task the judge read: a verdict judged under another task is stale.",
    "check": "Id of the check in the rubric, for reading the file (matching uses check_text).",
    "quote": "The passage of the output the judge based its answer on (checked: it occurs in the output).",
    "unverified_quote": "The judge's quote when it does not occur in the output: recorded, never shown as evidence.",
    "usage": "Tokens the judge call used.",
    "input_tokens": "Prompt tokens.",
    "output_tokens": "Reply tokens.",
    "at": "When the verdict was judged (ISO 8601).",
    "sample": "0-based index of this answer among a pair's samples (--samples N); absent means 0.",
    "batch": "The provider's batch id, for a verdict judged through a Batch API.",
    "served_model": "The model the provider said answered, when it is not exactly the judge's model (a note).",
}


def _describe(schema: dict[str, Any], descriptions: dict[str, str]) -> None:
    for name, spec in schema.get("properties", {}).items():
        if name in descriptions:
            spec.setdefault("description", descriptions[name])
    for definition in schema.get("$defs", {}).values():
        _describe(definition, descriptions)


def verdict_schema() -> dict[str, Any]:
    schema = _schema(Verdict, "rubric-gate verdict (one line of a verdicts JSONL file)", "verdict.schema.json")
    _describe(schema, VERDICT_FIELDS)
    return schema


def report_schema() -> dict[str, Any]:
    return _schema(RunReport, "rubric-gate action report (report.json)", "report.schema.json")


# The schemas of what a team writes (for editors, and listed in the README) ...
SCHEMA_FILES: dict[str, Callable[[], dict[str, Any]]] = {
    "rubric.schema.json": rubric_schema,
    "calibration-item.schema.json": calibration_item_schema,
    "verdict.schema.json": verdict_schema,
}
# ... and of what the action writes for a reviewer's tooling (docs/action.md, "Outputs").
OUTPUT_SCHEMA_FILES: dict[str, Callable[[], dict[str, Any]]] = {
    "report.schema.json": report_schema,
}
ALL_SCHEMA_FILES = {**SCHEMA_FILES, **OUTPUT_SCHEMA_FILES}


def render_schema(name: str) -> str:
    """The exact text committed for schema file `name`."""
    return json.dumps(ALL_SCHEMA_FILES[name](), indent=2, ensure_ascii=False) + "\n"


def packaged_schema_path(name: str) -> Path:
    return Path(__file__).resolve().parent / name
