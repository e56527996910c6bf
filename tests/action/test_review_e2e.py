"""The action with `audit`, `audit_rule` and `suggest_repairs`: audits in the comment and as
notices, repairs the gate accepts as suggestion review comments, posted once and then edited."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from tests.action.harness import FRUIT_ITEMS, Scenario, fruit_rubric
from tests.fakes.audit_llm import FakeAuditLLM

FRESH = "The output mentions kiwi"  # fails the correct item c1


@pytest.fixture
def llm() -> Iterator[FakeAuditLLM]:
    server = FakeAuditLLM().start()
    yield server
    server.stop()


def test_audit_and_repairs_in_the_action(scenario: Scenario, llm: FakeAuditLLM) -> None:
    scenario.git("checkout", "-q", "main")
    base = scenario.git.commit({
        "rubrics/demo.yaml": None,
        "rubrics/fruit.yaml": fruit_rubric([("apple", "The output mentions apple"), ("pear", "The output mentions pear")]),
        "calibration/fruit.jsonl": "".join(json.dumps({"id": i, "input": f"basket {i}", "output": o, "label": lab}) + "\n"
                                           for i, o, lab in FRUIT_ITEMS),
    }, "fruit rubric")
    scenario.git("checkout", "-q", "pr")
    scenario.git("merge", "-q", "--ff-only", "main")
    scenario.base_sha = scenario.fake.base_sha = base
    llm.repairs = {FRESH: [{"operator": "drop_unstated", "checks": ["The output mentions plum"], "why": "stated"}]}
    head = scenario.git.commit({"rubrics/fruit.yaml": fruit_rubric([
        ("apple", "The output mentions apple"), ("pear", "The output mentions pear"),
        ("fresh", FRESH), ("both", "The output mentions apple and pear")])}, "add two checks")
    env = {"OPENAI_BASE_URL": llm.openai_url, "OPENAI_API_KEY": "sk-test", "RUBRIC_GATE_RETRY_BASE": "0.01"}
    inputs = {"judge": "openai:fake-model", "audit_rule": "true", "suggest_repairs": "true"}
    result = scenario.run(head, env_extra=env, **inputs)
    assert result.code == 1, result.stdout + result.stderr
    (rubric,) = result.report()["rubrics"]
    decisions = {c["check"]: c["decision"] for c in rubric["report"]["changes"]}
    assert decisions == {"fresh": "rejected", "both": "rejected"}  # blamed; and not atomic (rule A)
    assert any(c["reason"].startswith("audit: ") for c in rubric["report"]["changes"] if c["check"] == "both")
    assert [s["operator"] for s in rubric["repairs"]["suggestions"]] == ["drop_unstated"]

    body = scenario.fake.marked_comments()[0]["body"]
    assert "audit" in body.lower() and "plum" in body
    (run,) = scenario.fake.check_runs.values()
    assert any(a["annotation_level"] == "notice" for a in run["output"]["annotations"])
    assert "could not be posted" not in result.stdout, result.stdout
    assert scenario.fake.review_comments, (result.stdout, [r for r in scenario.fake.requests if "pulls" in r[1]])
    (review,) = scenario.fake.review_comments.values()
    assert "```suggestion" in review["body"] and "The output mentions plum" in review["body"]

    calls = llm.received
    again = scenario.run(head, env_extra=env, **inputs)
    # What the first run cached is saved under the PR's own scope, which a PR's run does not read
    # (any workflow running for the PR can save there): judged and audited again, the same calls.
    assert again.code == 1 and llm.received == 2 * calls
    assert len(scenario.fake.review_comments) == 1  # the suggestion is not posted twice
