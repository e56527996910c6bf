"""The JSON Schemas: generated from the models, committed, shipped, and they accept what we accept."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
import yaml

from rubric_gate.schema import SCHEMA_FILES, packaged_schema_path, render_schema
from tests.support.values import schema_properties

ROOT = Path(__file__).resolve().parents[2]
BUNDLED = sorted([*ROOT.glob("rubrics/**/*.yaml"), *ROOT.glob("examples/*.yaml")])
HEADER = "# yaml-language-server: $schema=../schema/rubric.schema.json"


@pytest.mark.parametrize("name", sorted(SCHEMA_FILES))
def test_committed_and_packaged_copies_equal_the_model(name: str) -> None:
    expected = render_schema(name)
    for path in (ROOT / "schema" / name, packaged_schema_path(name)):
        assert path.read_text(encoding="utf-8") == expected, f"{path} is stale: run `python -m rubric_gate.schema`"


def test_regenerating_rewrites_a_stale_copy(tmp_path: Path) -> None:
    from rubric_gate.schema.__main__ import main

    (tmp_path / "rubric.schema.json").write_text("{}\n")
    assert main([str(tmp_path)]) == 0
    assert (tmp_path / "rubric.schema.json").read_text() == render_schema("rubric.schema.json")


@pytest.mark.parametrize("name", sorted(SCHEMA_FILES))
def test_every_key_is_described_and_objects_are_closed(name: str) -> None:
    schema = json.loads(render_schema(name))
    properties = schema_properties(schema)
    assert properties
    for key, spec in properties:
        assert spec.get("description"), key
    objects = [schema, *(d for d in schema.get("$defs", {}).values() if d.get("type") == "object")]
    assert all(o["additionalProperties"] is False for o in objects)


def test_origin_and_aggregation_are_enums() -> None:
    schema = json.loads(render_schema("rubric.schema.json"))
    assert schema["$defs"]["Origin"]["enum"] == ["hand", "generated", "review", "label"]
    branches = schema["properties"]["aggregation"]["anyOf"]
    assert {"enum": ["all-pass"], "type": "string"} in branches


def _validator() -> jsonschema.Draft202012Validator:
    schema = json.loads(render_schema("rubric.schema.json"))
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


@pytest.mark.parametrize("path", BUNDLED, ids=lambda p: p.name)
def test_bundled_rubrics_validate_and_point_editors_at_the_schema(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    assert text.splitlines()[0] == HEADER
    assert (path.parent / "../schema/rubric.schema.json").resolve().is_file()
    errors = list(_validator().iter_errors(yaml.safe_load(text)))
    assert not errors, errors


BASE = yaml.safe_load((ROOT / "rubrics" / "cloud-security-review.yaml").read_text())


@pytest.mark.parametrize(("mutate", "fragment"), [
    (lambda d: d.update(colour="red"), "colour"),
    (lambda d: d.pop("task"), "task"),
    (lambda d: d["checks"][0].update(origin="handmade"), "handmade"),
    (lambda d: d["checks"][0].update(orign="hand"), "orign"),
    (lambda d: d.update(aggregation="most-pass"), "most-pass"),
    (lambda d: d.update(aggregation={"max_failures": -1}), "-1"),
    (lambda d: d["checks"][0].update(id="bad id"), "bad id"),
])
def test_broken_rubrics_do_not_validate(mutate, fragment: str) -> None:
    data = json.loads(json.dumps(BASE))
    mutate(data)
    errors = list(_validator().iter_errors(data))
    assert errors and any(fragment in str(e.message) or fragment in str(e.instance) for e in errors)


def test_calibration_lines_validate_against_the_item_schema() -> None:
    validator = jsonschema.Draft202012Validator(json.loads(render_schema("calibration-item.schema.json")))
    for line in (ROOT / "calibration" / "cloud-security-review.jsonl").read_text().splitlines():
        assert not list(validator.iter_errors(json.loads(line)))
    assert list(validator.iter_errors({"id": "x", "input": 1, "output": 2, "label": "maybe"}))
    assert list(validator.iter_errors({"id": "x", "input": 1, "output": 2, "label": "pass", "note": "?"}))


def test_verdict_lines_validate_against_the_verdict_schema() -> None:
    validator = jsonschema.Draft202012Validator(json.loads(render_schema("verdict.schema.json")))
    lines = (ROOT / "calibration" / "cloud-security-review.verdicts.jsonl").read_text().splitlines()
    assert lines and all(not list(validator.iter_errors(json.loads(line))) for line in lines)
    good = {"item": "ex-1", "check_text": "The answer cites a section.", "answer": "yes"}
    assert not list(validator.iter_errors(good))
    for bad in ({**good, "answer": "maybe"}, {**good, "colour": "red"}, {**good, "sample": -1},
                {**good, "sample": "0"}, {**good, "usage": {"input_tokens": 1, "cost": 2}},
                {k: v for k, v in good.items() if k != "check_text"}, {**good, "item": ""}):
        assert list(validator.iter_errors(bad)), bad


@pytest.mark.parametrize("name", sorted(SCHEMA_FILES))
def test_each_schema_names_its_published_url(name: str) -> None:
    schema = json.loads(render_schema(name))
    assert schema["$id"] == f"https://raw.githubusercontent.com/rubric-gate/rubric-gate/main/schema/{name}"
    formats = (ROOT / "docs" / "file-formats.md").read_text()  # the schemas' reference, linked from the README
    assert f"schema/{name}" in formats and schema["$id"].rsplit("/schema/", 1)[0] in formats
