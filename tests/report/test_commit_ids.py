"""Commit ids in the comment: not linked by GitHub, and copied as the id (no invisible character
inside it). GitHub's reference filters skip text inside <code>, <pre> and <a>; `neutralize` puts
each hex run in a <code> element, which works in Markdown prose, in a table cell and inside the
raw HTML of a <summary> line alike."""

from __future__ import annotations

import pytest

from rubric_gate.report.markdown import neutralize
from tests.action.conftest import scenario
from tests.action.harness import RUBRIC, Scenario, rubric_yaml
from tests.support import gfm

__all__ = ["scenario"]

SHORT, FULL = "3e5c1e6", "3e5c1e60269ae0329094de131227285d4682b665"
INVISIBLE = ("\u200b", "\u200c", "\u200d", "\u2060", "\ufeff")


def _commit_references(root: gfm.Element) -> list[tuple[str, str]]:
    return [span for span in gfm.live_spans(root) if span[0] == "commit reference"]


def test_the_parser_sees_a_bare_commit_id_as_a_reference() -> None:
    assert _commit_references(gfm.parse(f"merged onto the base tip {SHORT}: 2 failures")) == [
        ("commit reference", SHORT)]


@pytest.mark.parametrize("context", ["{}", "- {}", "| a | b |\n|---|---|\n| x | {} |",
                                     "<details><summary>Gated rubric ({})</summary>\n\nbody\n</details>"],
                         ids=["paragraph", "list item", "table cell", "html summary"])
@pytest.mark.parametrize("text", [f"merged onto the base tip {SHORT}: 2 failures", f"{SHORT}:rubrics/x.yaml:2: bad",
                                  f"version {FULL}", f"ids {SHORT}, {FULL} and deadbeefcafe1"])
def test_a_commit_id_is_code_not_a_reference_and_copies_exactly(context: str, text: str) -> None:
    rendered = context.format(neutralize(text))
    root = gfm.parse(rendered)
    assert _commit_references(root) == [] and gfm.live_spans(root) == []
    shown = root.text()
    assert text in shown, shown  # what a reader copies is what was written
    assert not any(mark in rendered for mark in INVISIBLE)
    codes = {code.text() for code in root.iter("code")}
    assert SHORT in codes or FULL in codes


def test_user_text_still_opens_no_code_span_or_html_of_its_own() -> None:
    rendered = neutralize("`<code>deadbeef1` <b>x</b>")
    root = gfm.parse(rendered)
    assert [code.text() for code in root.iter("code")] == ["deadbeef1"]
    assert root.text().strip() == "'<code>deadbeef1' <b>x</b>" and not root.find_all("b")


@pytest.mark.e2e
def test_the_tip_a_rubric_fails_merged_onto_is_named_by_an_id_that_copies(scenario: Scenario) -> None:
    """End to end: the comment names the base tip by its short id, in code, with nothing inside it."""
    git = scenario.git
    git("checkout", "-q", "main")
    tip = git.commit({RUBRIC: rubric_yaml(["A", "D"])}, "main: drop B and C")  # D alone catches R3 there
    scenario.base_sha = scenario.fake.base_sha = tip
    git("checkout", "-q", "pr")
    head = git.commit({RUBRIC: rubric_yaml(["A", "B", "C"])}, "delete D")
    result = scenario.run(head)
    assert result.code == 1
    body = scenario.fake.marked_comments()[0]["body"]
    root = gfm.parse(body)
    assert f"<code>{tip[:7]}</code>" in body and tip[:7] in root.text(), body
    assert not any(mark in body for mark in INVISIBLE)
    # Bare ids are only the run's own, in render.py's base line and footer (GitHub links them to
    # those commits); the failure's id came through `neutralize` and is code.
    own = {tip[:7], head[:7], git("merge-base", tip, head)[:7]}
    assert {text for _, text in _commit_references(root)} <= own
    [(_, failure)] = [alert for alert in gfm.alerts(root) if "merged onto" in alert[1]]
    assert failure.startswith(f"Fails: merged onto the base branch's tip {tip[:7]}, deleted D is rejected"), failure
    [quote] = [q for q in root.iter("blockquote") if "merged onto" in q.text()]
    assert tip[:7] in {code.text() for code in quote.iter("code")} and _commit_references(quote) == []
