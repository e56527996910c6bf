"""A repair of a promptfoo config's check replaces its llm-rubric assertion's lines with
llm-rubric entries (`repair.yaml_spans`): found where the reader stored the assertion, written at
its indentation with its other keys kept, read back as the checks the gate accepted."""

from __future__ import annotations

from pathlib import Path

import yaml

from rubric_gate.repair.yaml_spans import document_spans, replacement_yaml
from rubric_gate.rubric import Check, load_rubric
from tests.support.promptfoo_project import BASE_CONFIG, CONFIG_PATH, make_repo


def _lines(text: str, start: int, end: int) -> str:
    return "".join(text.splitlines(keepends=True)[start - 1:end])


def test_each_assertion_is_found_on_its_lines_and_replaced_by_llm_rubric_entries(tmp_path: Path) -> None:
    config = BASE_CONFIG.replace("      metric: polite\n", "      metric: polite\n      weight: 2\n").replace(
        "does not blame the customer.\n", "does not blame the customer.\n      # a comment after it\n\n")
    repo = make_repo(tmp_path / "repo", branch=False)
    repo.write(CONFIG_PATH, config)
    doc = load_rubric(CONFIG_PATH, repo.root)
    spans = document_spans(doc)
    assert set(spans) == {c.id for c in doc.rubric.checks}
    polite = spans["polite"]
    assert _lines(config, polite.start_line, polite.end_line) == (
        "    - type: llm-rubric\n      metric: polite\n      weight: 2\n"
        "      value: The answer is polite and does not blame the customer.\n")
    assert polite.indent == 4
    concise = spans["concise"]  # in a test, deeper
    assert concise.indent == 6 and "metric: concise" in _lines(config, concise.start_line, concise.end_line)
    # A rewrite split in two: the first keeps the id, the second gets its own; other keys stay.
    checks = [Check(id="polite", text="The answer is polite."), Check(id="polite-2", text="It blames nobody.")]
    replacement = replacement_yaml(doc, "polite", checks, polite.indent)
    assert replacement == ("    - type: llm-rubric\n      metric: polite\n      weight: 2\n"
                           "      value: The answer is polite.\n"
                           "    - type: llm-rubric\n      metric: polite-2\n      weight: 2\n"
                           "      value: It blames nobody.\n")
    # Applied, the file reads back with those checks in that place.
    lines = config.splitlines(keepends=True)
    repo.write(CONFIG_PATH, "".join(lines[:polite.start_line - 1]) + replacement + "".join(lines[polite.end_line:]))
    applied = load_rubric(CONFIG_PATH, repo.root)
    assert applied.rubric.check_ids[:4] == ["answers-question", "refund-window", "polite", "polite-2"]
    assert yaml.safe_load((repo.root / CONFIG_PATH).read_text())["defaultTest"]["assert"][2]["weight"] == 2


def test_a_check_without_a_metric_gets_one_so_its_id_survives_the_rewording(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", branch=False)
    doc = load_rubric(CONFIG_PATH, repo.root)
    slug = "the-answer-makes-no-promise-the-policy-does-not"
    replacement = replacement_yaml(doc, slug, [Check(id=slug, text="No promise beyond the policy.")], 4)
    assert replacement == (f"    - type: llm-rubric\n      metric: {slug}\n      value: No promise beyond the policy.\n")


def test_a_check_written_in_several_tests_or_in_flow_style_has_no_span(tmp_path: Path) -> None:
    repeated = BASE_CONFIG.replace("      - type: contains\n", "      - type: llm-rubric\n        metric: polite\n"
                                   "        value: The answer is polite and does not blame the customer.\n"
                                   "      - type: contains\n")
    flow = BASE_CONFIG.replace("    - type: llm-rubric\n      metric: answers-question\n"
                               "      value: The answer addresses the refund question the customer asked.\n",
                               "    - {type: llm-rubric, metric: answers-question, value: The answer addresses the "
                               "refund question the customer asked.}\n")
    repo = make_repo(tmp_path / "repo", branch=False)
    for text, missing in ((repeated, "polite"), (flow, "answers-question")):
        repo.write(CONFIG_PATH, text)
        doc = load_rubric(CONFIG_PATH, repo.root)
        spans = document_spans(doc)
        assert missing in doc.rubric.check_ids and missing not in spans
        assert len(spans) == len(doc.rubric.checks) - 1
