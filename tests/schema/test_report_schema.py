"""The schema of the action's report.json: generated from its model, committed, shipped, every
key described and every object closed (a report is validated end to end in
tests/action/test_merge_report.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rubric_gate.schema import OUTPUT_SCHEMA_FILES, packaged_schema_path, render_schema
from tests.support.values import schema_properties

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("name", sorted(OUTPUT_SCHEMA_FILES))
def test_committed_and_packaged_copies_equal_the_model(name: str) -> None:
    expected = render_schema(name)
    for path in (ROOT / "schema" / name, packaged_schema_path(name)):
        assert path.read_text(encoding="utf-8") == expected, f"{path} is stale: run `python -m rubric_gate.schema`"


@pytest.mark.parametrize("name", sorted(OUTPUT_SCHEMA_FILES))
def test_every_key_is_described_and_objects_are_closed(name: str) -> None:
    schema = json.loads(render_schema(name))
    properties = schema_properties(schema)
    assert properties and all(spec.get("description") for _, spec in properties)
    objects = [schema, *(d for d in schema.get("$defs", {}).values() if d.get("type") == "object")]
    assert all(o["additionalProperties"] is False for o in objects)


def test_the_report_names_every_rule_and_its_differences() -> None:
    from rubric_gate.trust.differences import Rule

    schema = json.loads(render_schema("report.schema.json"))
    difference = schema["$defs"]["ClassifiedDifference"]
    assert set(difference["required"]) == {"kind", "file", "used_by", "rule", "message", "count", "needs_override"}
    assert difference["properties"]["rule"]["enum"] == [rule.value for rule in Rule]
    assert "differences" not in schema["required"]  # a report written before it still validates
    assert schema["$id"].endswith("/schema/report.schema.json")
    assert "schema/report.schema.json" in (ROOT / "docs" / "action.md").read_text()
