"""Every structured-reply schema is strict, as OpenAI's strict mode demands: each object lists all
its properties as required and allows no other key. They are built by one helper, so a schema
cannot leave a property out of `required` by a missed name. And every reply is bounded in the
schema itself: each string has a maximum length or is one of an enum, each array a maximum
number of items, so a provider that enforces the schema stops a model that loops."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from rubric_gate.audit import adversarial
from rubric_gate.audit import parse as audit_parse
from rubric_gate.discover import parse as discover_parse
from rubric_gate.judges import parse as judges_parse
from rubric_gate.llm.replies import YES_NO, list_of, strict_object
from rubric_gate.paraphrase import prompt as paraphrase_prompt
from rubric_gate.preference import parse as preference_parse
from rubric_gate.repair import parse as repair_parse
from rubric_gate.teach import parse as teach_parse

SCHEMAS = {
    "judge answer": judges_parse.ANSWER_SCHEMA, "judge checklist": judges_parse.checklist_schema(["c1", "c2"]),
    "audit structure": audit_parse.STRUCTURE_SCHEMA, "audit grounding": audit_parse.GROUNDING_SCHEMA,
    "attack": adversarial.ATTACK_SCHEMA, "verify": adversarial.VERIFY_SCHEMA,
    "extract": discover_parse.EXTRACT_SCHEMA, "merge": discover_parse.merge_schema(["c1", "c2", "c3"]),
    "repair": repair_parse.repair_schema(3), "teach": teach_parse.TEACH_SCHEMA, "paraphrase": paraphrase_prompt.SCHEMA,
    "prefer": preference_parse.PREFER_SCHEMA, "applies": preference_parse.applies_schema(["c1", "c2"]),
}


def nodes(schema: Any, where: str = "") -> Iterator[tuple[str, dict[str, Any]]]:
    """Every sub-schema with its path."""
    if isinstance(schema, dict):
        yield where or "/", schema
        for key, value in schema.items():
            yield from nodes(value, f"{where}/{key}")
    elif isinstance(schema, list):
        for index, value in enumerate(schema):
            yield from nodes(value, f"{where}[{index}]")


def loose_objects(schema: Any) -> list[str]:
    """Where an object schema leaves a property optional or allows other keys."""
    return [where for where, node in nodes(schema) if node.get("type") == "object" and (
        node.get("required") != list(node.get("properties", {})) or node.get("additionalProperties") is not False)]


def test_the_probe_finds_a_loose_object() -> None:
    loose = {"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "string"}}, "required": ["a"],
             "additionalProperties": False}
    assert loose_objects({"type": "object", "properties": {"x": loose}, "required": ["x"],
                          "additionalProperties": False}) == ["/properties/x"]


def test_the_helpers_build_strict_objects() -> None:
    schema = list_of("answers", strict_object({"id": {"type": "string"}, "n": {"type": "integer"}}), max_items=4)
    assert schema == {"type": "object", "properties": {"answers": {"type": "array", "items": {
        "type": "object", "properties": {"id": {"type": "string"}, "n": {"type": "integer"}}, "required": ["id", "n"],
        "additionalProperties": False}, "minItems": 0, "maxItems": 4}}, "required": ["answers"],
        "additionalProperties": False}


def unbounded(schema: Any) -> list[str]:
    """Where a string has neither a maximum length nor an enum, or an array no maximum size."""
    return [where for where, node in nodes(schema)
            if (node.get("type") == "string" and "maxLength" not in node and "enum" not in node)
            or (node.get("type") == "array" and "maxItems" not in node)]


def test_the_probe_finds_an_unbounded_string_and_array() -> None:
    assert unbounded(strict_object({"q": {"type": "string"}, "a": {"type": "array", "items": YES_NO}})) == [
        "/properties/q", "/properties/a"]
    assert unbounded({"anyOf": [YES_NO, {"type": "string"}]}) == ["/anyOf[1]"]


@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_every_reply_is_bounded_in_its_schema(name: str) -> None:
    assert unbounded(SCHEMAS[name]) == []


def test_a_reply_naming_a_check_or_criterion_names_one_of_the_ids_shown() -> None:
    ids = ["c1", "c2", "c3"]
    checklist = judges_parse.checklist_schema(ids)["properties"]["answers"]
    assert checklist["items"]["properties"]["id"]["enum"] == ids
    assert (checklist["minItems"], checklist["maxItems"]) == (3, 3)  # one answer per check id
    applies = preference_parse.applies_schema(ids)["properties"]["answers"]
    assert applies["items"]["properties"]["id"]["enum"] == ids and applies["maxItems"] == 3
    assignments = discover_parse.merge_schema(ids)["properties"]["assignments"]
    assert assignments["items"]["properties"]["id"]["enum"] == ids
    assert (assignments["minItems"], assignments["maxItems"]) == (3, 3)  # every criterion assigned, once
    criteria = discover_parse.EXTRACT_SCHEMA["properties"]["criteria"]
    assert (criteria["minItems"], criteria["maxItems"]) == (discover_parse.MIN_CRITERIA, discover_parse.MAX_CRITERIA)
    candidates = repair_parse.repair_schema(2)["properties"]["candidates"]
    split, other = candidates["items"]["anyOf"]
    assert candidates["maxItems"] == 2 and split["properties"]["operator"]["enum"] == ["split_atomic"]
    assert (split["properties"]["checks"]["minItems"], other["properties"]["checks"]["maxItems"]) == (2, 1)


@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_every_reply_schema_is_strict(name: str) -> None:
    assert loose_objects(SCHEMAS[name]) == []
