"""The merge reply: every criterion assigned once (the schema's count and enum, the parser for
what an array cannot forbid), groups named by their members, refused never guessed."""

from __future__ import annotations

import json

import pytest

from rubric_gate.audit.templates import template_source
from rubric_gate.discover.parse import Merge, merge_schema, parse_merge
from rubric_gate.discover.run import PACKAGE
from rubric_gate.llm.errors import MalformedReply

IDS = ["c1", "c2", "c3"]
INSTRUCTIONS = template_source(PACKAGE, "merge.j2")


def reply(assignments: list[tuple[str, str]], groups: list[tuple[str, str]]) -> str:
    return json.dumps({"assignments": [{"id": i, "group": g} for i, g in assignments],
                       "groups": [{"group": g, "check": c} for g, c in groups]})


def test_the_schema_asks_for_each_criterion_once_by_its_id() -> None:
    assignments = merge_schema(IDS)["properties"]["assignments"]
    assert (assignments["minItems"], assignments["maxItems"]) == (3, 3)
    assert assignments["items"]["properties"]["id"]["enum"] == IDS


def test_criteria_given_one_group_name_merge_and_a_lone_one_stays() -> None:
    text = reply([("c1", "Names a CVE"), ("c2", "names a  cve"), ("c3", "Is polite")],
                 [("names a CVE", "The response names the CVE it reports"), ("Is polite", "The response is polite")])
    assert parse_merge(text, IDS, INSTRUCTIONS) == [Merge(("c1", "c2"), "Names a CVE",
                                                          "The response names the CVE it reports")]


@pytest.mark.parametrize("assignments, groups, problem", [
    # SmolLM2-135M's reply under the old shape put one criterion in two groups: now one id twice.
    ([("c1", "a"), ("c1", "b"), ("c2", "b")], [], "criterion c1 is assigned twice"),
    ([("c1", "a"), ("c2", "a")], [("a", "The response names a CVE")], "criteria without an assignment: c3"),
    ([("c1", "a"), ("c2", "a"), ("c3", "b")], [], "group 'a' of 2 criteria has no check"),
    ([("c1", "a"), ("c2", "a"), ("c3", "b")], [("a", "...")], "a group's check is no sentence of its own"),
    ([("c1", "..."), ("c2", "..."), ("c3", "b")], [("...", "The response names a CVE")], "group name '...' of 2"),
    ([("c1", "a"), ("c2", "a"), ("c3", "b")], [("a", "The response ...")], "a group's check is no sentence of its own"),
    ([("c1", "a"), ("c2", "a"), ("c3", "b")], [("a", "The response names a CVE"), ("A", "The response is short")],
     "group 'a' has two checks"),
    ([("c1", "a"), ("c2", "a"), ("c9", "b")], [("a", "The response names a CVE")], "unknown criterion id 'c9'"),
])
def test_a_reply_that_does_not_assign_each_criterion_once_is_refused(assignments, groups, problem) -> None:
    with pytest.raises(MalformedReply, match=problem) as caught:
        parse_merge(reply(assignments, groups), IDS, INSTRUCTIONS)
    assert caught.value.hint and "c9" not in caught.value.hint  # the re-ask never echoes the reply
