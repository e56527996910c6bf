"""Pure pieces: YAML spans, strict parsing, suggestion bodies, the review-comment plan."""

from __future__ import annotations

import json

import pytest

from rubric_gate.audit.parse import parse_grounding, parse_structure
from rubric_gate.llm.errors import MalformedReply
from rubric_gate.repair import ExistingComment, check_spans, plan_review_comments
from rubric_gate.repair.parse import parse_repairs
from rubric_gate.repair.render import suggestion_comment_body
from rubric_gate.repair.yaml_spans import checks_yaml
from rubric_gate.rubric import Check
from tests.support.values import repair_suggestion

RUBRIC = """\
id: r
task: t
checks:
  # first
  - id: a
    text: >-
      folded
      text

  - id: b
    text: one line   # trailing comment
    origin: review
  # a comment after the last check
aggregation: all-pass
"""


def test_check_spans_cover_each_entry_without_trailing_blanks_or_comments() -> None:
    spans = check_spans(RUBRIC)
    assert (spans["a"].start_line, spans["a"].end_line, spans["a"].indent) == (5, 8, 2)
    assert (spans["b"].start_line, spans["b"].end_line) == (10, 12)
    assert check_spans("checks: [{id: a, text: x}]\n") == {}
    assert check_spans("checks:\n- id: z\n  text: last\n") ["z"].end_line == 3


def test_checks_yaml_keeps_indent_and_provenance() -> None:
    check = Check(id="b", text="Only when: it says `x`", origin="review", source="PR 12")
    text = checks_yaml([check], 2)
    assert text.startswith("  - id: b\n    text: ")
    assert "    origin: review\n" in text and "    source: PR 12\n" in text


def test_structure_reply_must_be_exact() -> None:
    good = {name: {"answer": "yes", "reason": "r"} for name in ("atomic", "consistent", "observable", "operational", "scoped")}
    assert parse_structure(json.dumps(good)).holds["atomic"] is True
    with pytest.raises(MalformedReply):
        parse_structure(json.dumps({**good, "extra": {"answer": "yes", "reason": ""}}))
    with pytest.raises(MalformedReply):
        parse_structure(json.dumps({**good, "atomic": {"answer": "maybe", "reason": ""}}))


def test_grounding_quote_must_come_from_the_right_text() -> None:
    task, check = "Report “public buckets” found.", "Names each public bucket and recommends remediation"
    assert parse_grounding(json.dumps({"beyond_task": "no", "quote": '"public  buckets"', "reason": ""}), task, check).grounded
    beyond = parse_grounding(json.dumps({"beyond_task": "yes", "quote": "recommends remediation", "reason": ""}), task, check)
    assert not beyond.grounded and beyond.quote == "recommends remediation"
    with pytest.raises(MalformedReply, match="does not occur in the task"):
        parse_grounding(json.dumps({"beyond_task": "no", "quote": "recommends remediation", "reason": ""}), task, check)
    with pytest.raises(MalformedReply):
        parse_grounding(json.dumps({"beyond_task": "no", "quote": "", "reason": ""}), task, check)


def test_repair_reply_only_library_operators_and_split_counts() -> None:
    def reply(*candidates: dict) -> str:
        return json.dumps({"candidates": list(candidates)})

    one = {"operator": "drop_unstated", "checks": ["New  text"], "why": "w"}
    assert [c.texts for c in parse_repairs(reply(one, one), "old", 3)] == [("New text",)]  # duplicates dropped
    assert parse_repairs(reply({**one, "checks": ["old"]}), "old", 3) == []  # a no-op is no candidate
    for bad in ({**one, "operator": "improve"}, {**one, "checks": ["a", "b"]},
                {"operator": "split_atomic", "checks": ["a"], "why": ""}, {**one, "checks": [" "]}):
        with pytest.raises(MalformedReply):
            parse_repairs(reply(bad), "old", 3)
    with pytest.raises(MalformedReply, match="at most 1"):
        parse_repairs(reply(one, {**one, "checks": ["other"]}), "old", 1)


def test_suggestion_body_fence_outlasts_backticks_and_text_is_inert() -> None:
    body = suggestion_comment_body(repair_suggestion("Uses ```code``` blocks"))
    assert "\n````suggestion\n  - id: fresh\n    text: Uses ```code``` blocks\n````\n" in body
    assert "@someone" not in body and body.startswith("<!-- rubric-gate:repair rubrics/r.yaml:fresh -->")


def test_review_comments_posted_once_updated_and_never_duplicated() -> None:
    first = plan_review_comments([], [repair_suggestion()])
    assert len(first.create) == 1 and not first.update and not first.delete
    new = first.create[0]
    assert (new.path, new.start_line, new.line) == ("rubrics/r.yaml", 10, 11)
    posted = [ExistingComment(7, new.body, new.path, new.line, new.start_line)]
    # Next push, same suggestion: nothing to do.
    same = plan_review_comments(posted, [repair_suggestion()])
    assert not (same.create or same.update or same.delete)
    # A different rewrite on the same lines: edited in place.
    changed = plan_review_comments(posted, [repair_suggestion("The output mentions pear")])
    assert changed.update and changed.update[0][0] == 7 and not changed.create
    # The check moved: a review comment cannot move, so it is replaced.
    moved = plan_review_comments(posted, [repair_suggestion(start=14, end=15)])
    assert moved.delete == [7] and len(moved.create) == 1
    # No suggestion any more: the comment says so (a thread is never deleted under a reply).
    gone = plan_review_comments(posted, [])
    assert gone.update and "no longer applies" in gone.update[0][1] and not gone.delete
    assert not plan_review_comments([ExistingComment(7, gone.update[0][1], new.path, 11, 10)], []).update
    # Someone else's comment, or a duplicate of ours, is never taken as the one to edit.
    dup = plan_review_comments([*posted, ExistingComment(8, new.body, new.path, 11, 10),
                                ExistingComment(9, "nice", new.path, 11)], [repair_suggestion()])
    assert dup.delete == [8] and not dup.create and not dup.update


def test_audit_annotations_are_notices_on_the_check_line() -> None:
    from rubric_gate.audit import AuditReport, CheckAudit, audit_annotations

    props = {"atomic": False, "consistent": True, "observable": True, "operational": True, "scoped": True}
    reasons = dict.fromkeys(props, "two demands \x1b[31m in one")
    flagged = CheckAudit("k", "t", 12, props, reasons, False, "recommends remediation", "not asked")
    fine = CheckAudit("ok", "t", 3, dict.fromkeys(props, True), reasons, True, "q", "r")
    [note] = audit_annotations([("rubrics/r.yaml", AuditReport("r", "r.yaml", [flagged, fine]))])
    assert (note["path"], note["start_line"], note["annotation_level"]) == ("rubrics/r.yaml", 12, "notice")
    assert note["title"] == "rubric-gate audit: check 'k' not atomic, ungrounded"
    assert "\x1b" not in note["message"] and "recommends remediation" in note["message"]


def test_a_torn_last_audit_line_is_cut_before_the_next_append(tmp_path) -> None:
    """Appending after a torn line cuts it: ending it with a newline would leave a bad line
    mid-file, and every later load would fail (the action's audit cache: every later run red)."""
    from rubric_gate.audit import AuditStore

    path = tmp_path / "audits.jsonl"
    store = AuditStore(path, str(path))
    store.record("structure", "m", "v1", "Check one?", "ctx", {"ok": True})
    with path.open("a") as handle:
        handle.write('{"kind": "structure", "model": "m", "pro')  # a save cut short
    again = AuditStore.load(path)
    assert len(again) == 1
    again.record("structure", "m", "v1", "Check two?", "ctx", {"ok": False})
    assert len(AuditStore.load(path)) == 2
    whole = '{"kind":"grounding","model":"m","prompt":"v1","check_text":"c","context":"x","result":{}}'
    with path.open("a") as handle:
        handle.write(whole)  # complete, without its newline: kept
    AuditStore.load(path).record("structure", "m", "v1", "Check three?", "ctx", {})
    assert len(AuditStore.load(path)) == 4


def test_a_damaged_audit_cache_is_moved_aside(tmp_path, capsys) -> None:
    from rubric_gate.action.cache.verdict_cache import VerdictCache

    (tmp_path / "audits.jsonl").write_text('{"kind": 1}\n{"also": "bad"}\n')
    cache = VerdictCache(tmp_path)
    assert len(cache.audit_store()) == 0
    assert "moved it to audits.jsonl.damaged-" in capsys.readouterr().out
    assert len(list(tmp_path.glob("audits.jsonl.damaged-*"))) == 1
