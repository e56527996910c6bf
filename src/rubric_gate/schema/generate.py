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

DRAFT = "https://json-schema.org/draft/2020-12/schema"


class _EnumLiterals(GenerateJsonSchema):
    """Literals as `enum` (pydantic writes a one-value literal as `const`): editors complete enums."""

    def literal_schema(self, schema: core_schema.LiteralSchema) -> JsonSchemaValue:
        result = super().literal_schema(schema)
        if "const" in result:
            result["enum"] = [result.pop("const")]
        return result


def _schema(model: type[BaseModel], title: str) -> dict[str, Any]:
    body = model.model_json_schema(schema_generator=_EnumLiterals)
    body["title"] = title
    return {"$schema": DRAFT, **body}


def rubric_schema() -> dict[str, Any]:
    return _schema(Rubric, "rubric-gate rubric")


def calibration_item_schema() -> dict[str, Any]:
    return _schema(CalibrationItem, "rubric-gate calibration item (one line of the JSONL file)")


SCHEMA_FILES: dict[str, Callable[[], dict[str, Any]]] = {
    "rubric.schema.json": rubric_schema,
    "calibration-item.schema.json": calibration_item_schema,
}


def render_schema(name: str) -> str:
    """The exact text committed for schema file `name`."""
    return json.dumps(SCHEMA_FILES[name](), indent=2, ensure_ascii=False) + "\n"


def packaged_schema_path(name: str) -> Path:
    return Path(__file__).resolve().parent / name
