"""The gated rubric's YAML: libyaml's emitter is used only where it writes what PyYAML's writes."""

from __future__ import annotations

import string

from hypothesis import given, settings
from hypothesis import strategies as st

from rubric_gate.rubric import Rubric, rubric_to_yaml
from rubric_gate.rubric import dump as dump_module

ASCII = st.text(alphabet=string.printable.strip() + " ", max_size=300)
ANY_TEXT = st.text(max_size=120)


def _python_dump(rubric: Rubric) -> str:
    """What `rubric_to_yaml` wrote before libyaml's emitter: PyYAML's pure-Python one."""
    fast = dump_module._FAST
    dump_module._FAST = None
    try:
        return rubric_to_yaml(rubric)
    finally:
        dump_module._FAST = fast


def _rubric(task: str, texts: list[str]) -> Rubric:
    return Rubric.model_validate({"id": "r", "version": "1", "task": task if task.strip() else "t",
                                  "calibration": "c.jsonl", "verdicts": "v.jsonl",
                                  "checks": [{"id": f"c{i}", "text": text if text.strip() else "x"}
                                             for i, text in enumerate(texts)]})


@settings(max_examples=150, deadline=None)
@given(ASCII, st.lists(ASCII, min_size=1, max_size=4))
def test_printable_ascii_rubrics_are_written_as_pyyaml_writes_them(task: str, texts: list[str]) -> None:
    rubric = _rubric(task, texts)
    assert rubric_to_yaml(rubric) == _python_dump(rubric)


@settings(max_examples=150, deadline=None)
@given(ANY_TEXT, st.lists(ANY_TEXT, min_size=1, max_size=3))
def test_any_rubric_is_written_as_pyyaml_writes_it(task: str, texts: list[str]) -> None:
    rubric = _rubric(task, texts)
    assert rubric_to_yaml(rubric) == _python_dump(rubric)


def test_the_fast_emitter_is_taken_for_printable_ascii_only() -> None:
    assert dump_module._printable_ascii({"a": ["b c", 1, {"d": "é"}]}) is False
    assert dump_module._printable_ascii({"a": ["b c", 1, {"d": "e: f"}]}) is True
    assert dump_module._printable_ascii("tab\there") is False
