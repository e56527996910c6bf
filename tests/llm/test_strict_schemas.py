"""Every structured-reply schema is strict, as OpenAI's strict mode demands: each object lists all
its properties as required and allows no other key. They are built by one helper, so a schema
cannot leave a property out of `required` by a missed name."""

from __future__ import annotations

from typing import Any

import pytest

from rubric_gate.audit import adversarial
from rubric_gate.audit import parse as audit_parse
from rubric_gate.discover import parse as discover_parse
from rubric_gate.judges import parse as judges_parse
from rubric_gate.llm.replies import list_of, strict_object
from rubric_gate.paraphrase import prompt as paraphrase_prompt
from rubric_gate.preference import parse as preference_parse
from rubric_gate.repair import parse as repair_parse
from rubric_gate.teach import parse as teach_parse

SCHEMAS = {
    "judge answer": judges_parse.ANSWER_SCHEMA, "judge checklist": judges_parse.CHECKLIST_SCHEMA,
    "audit structure": audit_parse.STRUCTURE_SCHEMA, "audit grounding": audit_parse.GROUNDING_SCHEMA,
    "attack": adversarial.ATTACK_SCHEMA, "verify": adversarial.VERIFY_SCHEMA,
    "extract": discover_parse.EXTRACT_SCHEMA, "merge": discover_parse.MERGE_SCHEMA,
    "repair": repair_parse.REPAIR_SCHEMA, "teach": teach_parse.TEACH_SCHEMA, "paraphrase": paraphrase_prompt.SCHEMA,
    "prefer": preference_parse.PREFER_SCHEMA, "applies": preference_parse.APPLIES_SCHEMA,
}


def loose_objects(schema: Any, where: str = "") -> list[str]:
    """Where an object schema leaves a property optional or allows other keys."""
    found = []
    if isinstance(schema, dict):
        if schema.get("type") == "object" and (schema.get("required") != list(schema.get("properties", {}))
                                               or schema.get("additionalProperties") is not False):
            found.append(where or "/")
        for key, value in schema.items():
            found += loose_objects(value, f"{where}/{key}")
    elif isinstance(schema, list):
        for index, value in enumerate(schema):
            found += loose_objects(value, f"{where}[{index}]")
    return found


def test_the_probe_finds_a_loose_object() -> None:
    loose = {"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "string"}}, "required": ["a"],
             "additionalProperties": False}
    assert loose_objects({"type": "object", "properties": {"x": loose}, "required": ["x"],
                          "additionalProperties": False}) == ["/properties/x"]


def test_the_helpers_build_strict_objects() -> None:
    schema = list_of("answers", strict_object({"id": {"type": "string"}, "n": {"type": "integer"}}))
    assert schema == {"type": "object", "properties": {"answers": {"type": "array", "items": {
        "type": "object", "properties": {"id": {"type": "string"}, "n": {"type": "integer"}}, "required": ["id", "n"],
        "additionalProperties": False}}}, "required": ["answers"], "additionalProperties": False}


@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_every_reply_schema_is_strict(name: str) -> None:
    assert loose_objects(SCHEMAS[name]) == []
