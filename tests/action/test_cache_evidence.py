"""The verdict cache is not evidence (issue 17, design item 3), end to end through `rubric-gate
action` against the fake GitHub with a real git repository.

GitHub restores the caches a pull request's own runs saved before the base branch's, and any
workflow running for the PR can save one under the gate's key prefix: what the action restores
in a PR's run may be planted. So a recorded answer the PR changes stands without the override
only where the configured judge, live in this run, gives it at the full key of the line the head
reads (judge, prompt version, task, check text, item content, sample); the cache never confirms
one. The flow docs/action.md suggests (commit the cache's verdicts after a merge) keeps working:
the copied lines are re-judged, pair by pair.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.action.harness import (
    FAILS,
    RUBRIC,
    TEXTS,
    VERDICTS,
    Scenario,
    rubric_yaml,
    verdicts_jsonl,
)
from tests.action.test_hostile_round3 import (
    JUDGE,
    _gate,
    _item_hash,
    _judge_env,
    _truthful_judge,
    _verdict,
)
from tests.action.test_integrity import _on_main

TASK = "Review a cloud security design."


def _cache_file(scenario: Scenario) -> Path:
    return scenario.git.path / ".rubric-gate" / "cache" / "verdicts.jsonl"


def _warm_main(scenario: Scenario) -> list[dict]:
    """The push run on main judges every pair into the cache: its lines, as `actions/cache` saves them."""
    scenario.fake.judge = _truthful_judge
    push = scenario.run(scenario.base_sha, judge=JUDGE, event_name="push",
                        env_extra={**_judge_env(scenario), "GITHUB_SHA": scenario.base_sha})
    assert push.code == 0, push.stdout + push.stderr
    lines = [json.loads(line) for line in _cache_file(scenario).read_text().splitlines()]
    assert len(lines) == 20 and all(v["judge"] == JUDGE and v["task_hash"] for v in lines)  # A-D on R1-R5
    return lines


def _copied(lines: list[dict]) -> str:
    """The follow-up PR: the cache's verdicts appended to the rubric's verdict file."""
    return verdicts_jsonl(TEXTS) + "".join(json.dumps(v) + "\n" for v in lines)


def _standard(result) -> list[dict]:
    return result.report()["standard"]


def test_the_follow_up_pr_copying_the_cache_passes_re_judged_pair_by_pair(scenario: Scenario) -> None:
    lines = _warm_main(scenario)
    calls = scenario.fake.judge_calls
    head = scenario.git.commit({VERDICTS: _copied(lines)}, "record the cache's verdicts")
    result = _gate(scenario, head, judge=JUDGE, env_extra=_judge_env(scenario))
    assert result.code == 0, result.stdout + result.stderr
    assert [f["blocking"] for f in _standard(result)] == [False], _standard(result)
    assert "re-judged these pairs" in _standard(result)[0]["message"]
    # Each copied pair was judged again, live: the restored cache (which held them all) confirmed none.
    assert scenario.fake.judge_calls - calls == len(lines)


def test_a_copied_line_whose_answer_the_judge_does_not_give_needs_the_override(scenario: Scenario) -> None:
    lines = _warm_main(scenario)
    flipped = [dict(v, answer="no") if (v["item"], v["check_text"]) == ("R4", TEXTS["C"]) else v for v in lines]
    head = scenario.git.commit({VERDICTS: _copied(flipped)}, "record the cache's verdicts, one flipped")
    result = _gate(scenario, head, judge=JUDGE, env_extra=_judge_env(scenario))
    assert result.code == 1, result.stdout + result.stderr
    blocking = [f for f in _standard(result) if f["blocking"]]
    assert len(blocking) == 1 and "C on R4: yes -> no" in blocking[0]["message"], _standard(result)
    assert "R1" not in blocking[0]["message"]  # the copied lines the judge gave again stand


def test_a_copied_line_keyed_to_another_judge_prompt_or_task_needs_the_override(scenario: Scenario) -> None:
    """Only a configured judge, under the current prompt version and the task of a rubric reading
    the file, can re-judge a keyed line at its own key: any other key is nobody's answer here."""
    lines = _warm_main(scenario)
    for field, value in (("judge", "openai:other-model"), ("prompt", "per-check-v0"), ("task_hash", "0" * 16)):
        scenario.git("reset", "-q", "--hard", scenario.base_sha)
        changed = [dict(v, **{field: value}) if (v["item"], v["check_text"]) == ("R1", TEXTS["A"]) else v
                   for v in lines]
        head = scenario.git.commit({VERDICTS: _copied(changed)}, f"a copied line with another {field}")
        result = _gate(scenario, head, judge=JUDGE, env_extra=_judge_env(scenario))
        blocking = [f for f in _standard(result) if f["blocking"]]
        # (Under another task the line is stale for demo's: it also hides the answer it outranks.)
        assert result.code == 1 and blocking, (field, _standard(result))
        assert all("on R1" in f["message"] and "R2" not in f["message"] for f in blocking), (field, blocking)


def test_copied_lines_without_a_judge_need_the_override(scenario: Scenario) -> None:
    """Replay (no judge, or a fork's run without the secret): nobody can re-judge the copied lines."""
    lines = _warm_main(scenario)
    head = scenario.git.commit({VERDICTS: _copied(lines)}, "record the cache's verdicts")
    assert _gate(scenario, head).code == 1
    fork = _gate(scenario, head, fork=True, judge=JUDGE)  # the judge's key is not given to a fork
    assert fork.code == 1 and any(f["blocking"] for f in _standard(fork))


def test_a_planted_cache_entry_does_not_excuse_a_flipped_answer(scenario: Scenario) -> None:
    """A workflow the PR adds saves a cache holding the judge's "answer" C: no on R1 (truly yes),
    keyed exactly as the configured judge would record it; the gate's run restores it. The PR flips
    the record to match and edits the rubric, so the gate judges C: before, the planted entry was
    read as this run's judging and excused the flip."""
    from rubric_gate.judges import PROMPT_VERSION
    from rubric_gate.verdicts import task_hash

    cache = _cache_file(scenario)
    cache.parent.mkdir(parents=True)
    cache.write_text(_verdict("C", "R1", "no", judge=JUDGE, prompt=PROMPT_VERSION, item_hash=_item_hash("R1"),
                              task_hash=task_hash(TASK)))
    scenario.fake.judge = _truthful_judge
    flipped = verdicts_jsonl(TEXTS, {**FAILS, "R1": FAILS["R1"] | {"C"}})
    head = scenario.git.commit({RUBRIC: rubric_yaml(["A", "B", "C", "D", "A2"]).replace("version: 1", "version: 2"),
                                VERDICTS: flipped}, "bump demo, add A2; flip C on R1")
    result = _gate(scenario, head, judge=JUDGE, env_extra=_judge_env(scenario))
    assert result.code == 1, result.stdout + result.stderr
    blocking = [f for f in _standard(result) if f["blocking"]]
    assert any(f"{TEXTS['C']} on R1: yes -> no" in f["message"] for f in blocking), _standard(result)


def test_the_judge_agreeing_with_a_flip_excuses_it_also_on_a_re_run(scenario: Scenario) -> None:
    """A re-run restores what the first run judged: the flip is re-judged live again, never read
    back from the cache, and still stands."""
    wrong = verdicts_jsonl(TEXTS, {**FAILS, "R4": set()})  # D on R4 recorded wrongly as yes
    scenario.git("reset", "-q", "--hard", _on_main(scenario, {VERDICTS: wrong}, "D on R4 recorded wrongly"))
    scenario.fake.judge = _truthful_judge
    head = scenario.git.commit({RUBRIC: rubric_yaml(["A", "B", "C", "D", "A2"]).replace("version: 1", "version: 2"),
                                VERDICTS: verdicts_jsonl(TEXTS)}, "bump demo, add A2; fix D on R4")
    first = _gate(scenario, head, judge=JUDGE, env_extra=_judge_env(scenario))
    assert first.code == 0, first.stdout + first.stderr
    calls = scenario.fake.judge_calls
    again = _gate(scenario, head, judge=JUDGE, env_extra=_judge_env(scenario))
    assert again.code == 0, again.stdout + again.stderr
    assert scenario.fake.judge_calls - calls == 1  # D on R4 only: the rest came from the cache


X_TEXT = "Is key rotation automated?"


@pytest.mark.xfail(strict=True, reason=(
    "route (open): a judged gate reads the restored verdict cache's answers as the judge's for the pairs "
    "it looks up, and a PR's run restores the caches saved under the PR's own scope first; a workflow the "
    "PR adds can save one there. Closing it needs a provenance the action can check (e.g. the cache as an "
    "artifact of a `push` run of this workflow on the base branch, through the Actions runs API), or "
    "judging every pair live (owner: evidence)"))
def test_a_planted_cache_entry_does_not_make_a_new_check_share_a_deleted_checks_catch(scenario: Scenario) -> None:
    """A catches R1 and no other check does. The PR deletes A and adds X; the planted cache says X
    answers "no" on R1 (the judge, asked, says "yes"): read as the judge's answer, X shares A's catch."""
    from rubric_gate.judges import PROMPT_VERSION
    from rubric_gate.verdicts import task_hash

    cache = _cache_file(scenario)
    cache.parent.mkdir(parents=True)
    cache.write_text(_verdict(X_TEXT, "R1", "no", judge=JUDGE, prompt=PROMPT_VERSION, item_hash=_item_hash("R1"),
                              task_hash=task_hash(TASK)))
    scenario.fake.judge = _truthful_judge  # X, unknown to it: "yes" on every item
    head = scenario.git.commit({RUBRIC: rubric_yaml(["B", "C", "D", "X"], extra={"X": X_TEXT})}, "A -> X")
    result = _gate(scenario, head, judge=JUDGE, env_extra=_judge_env(scenario))
    assert result.code == 1, result.stdout + result.stderr
