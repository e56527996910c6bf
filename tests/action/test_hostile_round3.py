"""Round 3 of the hostile pass on the trust boundary (issue 17): a PR author trying every class
of fact the gate trusts, end to end through `rubric-gate action` against the fake GitHub with a
real git repository. A test marked xfail(strict) is a route still open: it flips when closed.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from rubric_gate.calibration.model import item_content_hash
from tests.action.harness import (
    CALIBRATION,
    FAILS,
    LABELS,
    RUBRIC,
    TEXTS,
    VERDICTS,
    Scenario,
    calibration_jsonl,
    rubric_yaml,
    verdicts_jsonl,
)
from tests.action.test_integrity import _on_main, _with_origin

JUDGE = "openai:fake-model"


def _closed(*codes: int) -> bool:
    """A route in steps is closed when one step stops: rejected (1) or an input error (2); any
    other exit (3 is a crash) closes nothing."""
    return all(code in (0, 1, 2) for code in codes) and any(code in (1, 2) for code in codes)


def _judge_env(scenario: Scenario) -> dict[str, str]:
    return {"OPENAI_BASE_URL": f"{scenario.fake.url}/v1", "OPENAI_API_KEY": "sk-test"}


def _truthful_judge(prompt: str) -> str:
    check = next((cid for cid, text in TEXTS.items() if text in prompt), None)
    item = next((i for i in LABELS if f"review {i}" in prompt), None)
    if check is None or item is None:
        return "yes"
    return "no" if check in FAILS[item] else "yes"


def _branch(scenario: Scenario, name: str, start: str, files: dict[str, str | None], message: str) -> str:
    scenario.git("checkout", "-q", "-b", name, start)
    sha = scenario.git.commit(files, message)
    return sha


def _merge_into_main(scenario: Scenario, *branches: str) -> str:
    scenario.git("checkout", "-q", "main")
    for branch in branches:
        scenario.git("merge", "-q", "--no-ff", "-m", f"Merge {branch}", branch)  # raises on a conflict
    sha = scenario.git("rev-parse", "HEAD")
    scenario.base_sha = scenario.fake.base_sha = sha
    return sha


def _gate(scenario: Scenario, head: str, **kwargs):
    result = scenario.run(head, **kwargs)
    assert "Traceback" not in result.stderr, result.stderr
    return result


def _verdict(check: str, item: str, answer: str, **extra: object) -> str:
    return json.dumps({"item": item, "check_text": TEXTS.get(check, check), "answer": answer, **extra}) + "\n"


def _item_hash(item: str) -> str:
    return item_content_hash(f"design {item}", f"review {item}")


# -- a base the gate cannot read is a base that vouches for nothing ---------------------------

def test_two_no_op_prs_merging_into_a_broken_rubric_let_the_next_pr_delete_a_catch(scenario: Scenario) -> None:
    base_text = rubric_yaml(["A", "B", "C", "D"])
    top = base_text.replace("id: demo\n", "id: demo\naggregation: all-pass\n", 1)
    bottom = base_text + "aggregation: all-pass\n"
    a = _branch(scenario, "a", "main", {RUBRIC: top}, "spell out the default aggregation (top)")
    assert _gate(scenario, a).code == 0  # a no-op: the default, written out
    b = _branch(scenario, "b", "main", {RUBRIC: bottom}, "spell out the default aggregation (bottom)")
    assert _gate(scenario, b).code == 0
    main = _merge_into_main(scenario, "a", "b")  # git merges the two hunks cleanly: `aggregation` twice
    c = _branch(scenario, "c", main, {RUBRIC: rubric_yaml(["B", "C", "D"])}, "fix the duplicate key; delete A")
    result = _gate(scenario, c)
    assert result.code == 1 and result.outputs["decision"] == "fail", result.stdout + result.stderr


def test_two_item_prs_merging_into_a_broken_calibration_set_let_the_next_pr_relabel(scenario: Scenario) -> None:
    cal = calibration_jsonl()
    first = json.dumps({"id": "R6", "input": "design R6", "output": "review R6", "label": "fail"}) + "\n"
    second = json.dumps({"id": "R6", "input": "design R6b", "output": "review R6b", "label": "fail"}) + "\n"
    a = _branch(scenario, "a", "main", {CALIBRATION: first + cal}, "add R6 (top)")
    assert _gate(scenario, a).code == 0  # adding labeled items is allowed
    b = _branch(scenario, "b", "main", {CALIBRATION: cal + second}, "add R6 (bottom)")
    assert _gate(scenario, b).code == 0
    main = _merge_into_main(scenario, "a", "b")
    relabeled = calibration_jsonl({**LABELS, "R1": "pass"})
    c = _branch(scenario, "c", main, {CALIBRATION: relabeled, RUBRIC: rubric_yaml(["B", "C", "D"])},
                "fix the duplicate; relabel R1 as pass; delete A")
    result = _gate(scenario, c)
    assert result.code == 1 and result.outputs["decision"] == "fail", result.stdout + result.stderr


# -- the check is per commit: every base the commit is proposed into --------------------------

def test_a_second_pr_with_the_same_head_into_another_base_does_not_turn_the_check_green(scenario: Scenario) -> None:
    lenient = _branch(scenario, "staging", "main", {RUBRIC: rubric_yaml(["B", "C", "D"])}, "staging: no A")
    head = scenario.git.commit({"README.md": "tweak\n"}, "a harmless change on top of staging")
    into_main = _gate(scenario, head)
    assert into_main.code == 1, into_main.stdout + into_main.stderr
    # The same branch, proposed as PR #8 into `staging`: its diff there is the README.
    main_sha = scenario.base_sha
    scenario.fake.other_pulls = {7: {"base": main_sha, "head": head}}
    scenario.fake.pr_number, scenario.base_sha, scenario.fake.base_sha = 8, lenient, lenient
    into_staging = _gate(scenario, head)
    scenario.fake.other_pulls = {8: {"base": lenient, "head": head, "base_ref": "staging"}}
    scenario.fake.pr_number, scenario.base_sha, scenario.fake.base_sha = 7, main_sha, main_sha
    # PR #8's own diff passes; the commit it shares with PR #7 does not, and the job says so too.
    assert into_staging.code == 1 and into_staging.outputs["decision"] == "fail", into_staging.stdout
    assert "also proposed by" in into_staging.summary and "rejected deleted A" in into_staging.summary
    runs = [r for r in scenario.fake.check_runs.values() if r["head_sha"] == head and r["name"] == "rubric-gate"]
    latest = max(runs, key=lambda r: r["id"])
    assert latest["conclusion"] == "failure", runs  # what branch protection on main reads for PR #7
    # ... and a title edit on PR #7 repeats the head's last result as the job's status.
    edited = _gate(scenario, head, action="edited", payload={"changes": {"title": {"from": "x"}}})
    assert edited.code != 0, edited.stdout


def test_a_second_pr_with_the_same_head_into_a_base_where_it_passes_keeps_the_check_green(scenario: Scenario) -> None:
    """The other PR is gated against its own base: a head that passes into both stays green."""
    head = scenario.git.commit({"README.md": "tweak\n"}, "a harmless change")
    scenario.fake.other_pulls = {9: {"base": _branch(scenario, "staging", "main", {"notes.txt": "x\n"}, "staging"),
                                     "head": head}}
    scenario.git("checkout", "-q", head)
    result = _gate(scenario, head)
    assert result.code == 0 and result.outputs["decision"] == "pass", result.stdout + result.summary
    assert "also proposed" not in result.summary


def test_the_open_pulls_cannot_be_listed_fails_closed(scenario: Scenario) -> None:
    head = scenario.git.commit({"README.md": "tweak\n"}, "a harmless change")
    original = scenario.fake.handle

    def refuse_listing(method, path, token, body):
        if method == "GET" and path.endswith("/pulls"):
            scenario.fake.requests.append((method, path))
            return 403, {"message": "Resource not accessible by integration"}
        return original(method, path, token, body)

    scenario.fake.handle = refuse_listing  # type: ignore[method-assign]
    result = _gate(scenario, head)
    assert result.code == 2 and "cannot list the open pull requests" in result.stdout + result.stderr


# -- unicode in ids and check texts ------------------------------------------------------------

def test_a_homoglyph_rewording_with_copied_verdicts_is_rejected(scenario: Scenario) -> None:
    """A's text with a Cyrillic 'ie' (U+0435) is another text: the PR's copy of A's answers for it is untrusted."""
    spoof = TEXTS["A"].replace("e", "\u0435", 1)
    extra = "".join(_verdict(spoof, item, "no" if "A" in FAILS[item] else "yes") for item in LABELS)
    head = scenario.git.commit({RUBRIC: rubric_yaml(["A=A9", "B", "C", "D"], extra={"A9": spoof}),
                                VERDICTS: verdicts_jsonl(TEXTS) + extra}, "reword A (homoglyph)")
    result = _gate(scenario, head, trust_pr_verdicts="true")
    assert result.code == 1, result.stdout + result.stderr


@pytest.mark.parametrize("mark", ["\u200b", "\u00a0\u00a0", "\u2028"], ids=["zero-width", "nbsp", "line-separator"])
def test_an_invisible_rewording_of_a_frozen_check_is_rejected_or_a_no_op(scenario: Scenario, mark: str) -> None:
    """Whitespace of any kind is no rewording (the verdict key normalises it, so does the gate);
    a zero-width character is a rewording, which a frozen check refuses."""
    frozen = _with_origin(rubric_yaml(["A", "B", "C", "D"]), A="label")
    main = _on_main(scenario, {RUBRIC: frozen}, "A is label-derived")
    scenario.git("reset", "-q", "--hard", main)
    text = TEXTS["A"].replace(" data", mark + "data", 1)
    head = scenario.git.commit({RUBRIC: _with_origin(rubric_yaml(["A=A9", "B", "C", "D"], extra={"A9": text}),
                                                     A="label")}, "invisible edit of A")
    result = _gate(scenario, head)
    # zero-width: a new text with no verdicts (exit 2), never green
    assert (result.code == 2) if mark == "\u200b" else (result.code == 0), result.stdout + result.stderr


# -- verdict lines dressed up as something they are not ---------------------------------------

def _delete_a_with(scenario: Scenario, lines: str):
    """Delete A (the only check catching R1) with `lines` appended to the verdict file."""
    return scenario.git.commit({RUBRIC: rubric_yaml(["B", "C", "D"]), VERDICTS: verdicts_jsonl(TEXTS) + lines},
                               "delete A, with extra verdict lines")


@pytest.mark.parametrize("trust", ["true", "false"])
def test_a_verdict_keyed_as_the_configured_judge_cannot_share_a_catch(scenario: Scenario, trust: str) -> None:
    from rubric_gate.judges import PROMPT_VERSION
    from rubric_gate.verdicts import task_hash

    spoof = _verdict("B", "R1", "no", judge=JUDGE, prompt=PROMPT_VERSION, item_hash=_item_hash("R1"),
                     task_hash=task_hash("Review a cloud security design."))
    head = _delete_a_with(scenario, spoof)
    scenario.fake.judge = _truthful_judge
    result = _gate(scenario, head, judge=JUDGE, env_extra=_judge_env(scenario), trust_pr_verdicts=trust)
    assert result.code == 1, result.stdout + result.stderr


def test_a_keyed_verdict_with_the_judge_key_missing_cannot_share_a_catch(scenario: Scenario) -> None:
    """A fork: the configured judge has no key, so the record is replayed."""
    from rubric_gate.judges import PROMPT_VERSION
    from rubric_gate.verdicts import task_hash

    spoof = _verdict("B", "R1", "no", judge=JUDGE, prompt=PROMPT_VERSION, item_hash=_item_hash("R1"),
                     task_hash=task_hash("Review a cloud security design."))
    head = _delete_a_with(scenario, spoof)
    result = _gate(scenario, head, fork=True, judge=JUDGE)
    assert result.code == 1, result.stdout + result.stderr


@pytest.mark.parametrize("line", [
    _verdict("B", "R1", "no", sample=1),
    _verdict("B", "ZZ", "no", item_hash=_item_hash("R1")),
    _verdict("B", "R1", "no", task_hash="0" * 16),
    _verdict(TEXTS["B"].replace(" ", "  "), "R1", "no"),
    _verdict(TEXTS["B"].upper(), "R1", "no"),
], ids=["sample-index", "hash-only", "other-task", "respaced-text", "upper-case-text"])
def test_a_dressed_up_verdict_line_cannot_share_a_catch(scenario: Scenario, line: str) -> None:
    head = _delete_a_with(scenario, line)
    for trust in ("true", "false"):
        result = _gate(scenario, head, trust_pr_verdicts=trust)
        assert result.code == 1, (trust, result.stdout + result.stderr)


def test_a_verdict_line_with_a_stale_item_hash_cannot_hide_a_recorded_answer(scenario: Scenario) -> None:
    """The base's (A, R1) "no" re-recorded later in the file as "yes" with a hash that matches no
    item: read under the rubric's task the pair has no answer any more (a stale answer wins and is
    no answer). That is a lost answer, reported as one (the record's answer is compared as the
    gate reads it), and once merged a PR deleting A stops on a missing verdict: never "yes"."""
    first = scenario.git.commit({VERDICTS: verdicts_jsonl(TEXTS) + _verdict("A", "R1", "yes",
                                                                             item_hash="sha256:" + "0" * 16)},
                                "re-record A on R1 under a stale hash")
    first_result = _gate(scenario, first)
    scenario.git("checkout", "-q", "main")
    scenario.git("merge", "-q", "--ff-only", "pr")
    scenario.base_sha = scenario.fake.base_sha = first
    scenario.git("checkout", "-q", "pr")
    second = scenario.git.commit({RUBRIC: rubric_yaml(["B", "C", "D"])}, "delete A")
    result = _gate(scenario, second)
    assert (first_result.code, result.code) == (1, 2), first_result.stdout + result.stdout
    assert "removes 1 recorded verdict" in first_result.stdout


def test_a_torn_last_verdict_line_is_not_a_silent_deletion(scenario: Scenario) -> None:
    """The last recorded line cut mid-JSON (no newline): a committed file is not a torn write."""
    text = verdicts_jsonl(TEXTS)
    lines = text.splitlines(keepends=True)
    # Move (A, R1) to the end, then cut it: the store skips a torn tail.
    a_r1 = next(line for line in lines if json.loads(line)["item"] == "R1" and json.loads(line)["check_text"] == TEXTS["A"])
    rest = "".join(line for line in lines if line is not a_r1)
    head = scenario.git.commit({VERDICTS: rest + a_r1.rstrip("\n")[:-2], RUBRIC: rubric_yaml(["B", "C", "D"])},
                               "delete A; tear (A, R1)")
    result = _gate(scenario, head)
    assert result.code == 1, result.stdout + result.stderr


# -- labels --------------------------------------------------------------------------------------

def test_an_item_renamed_to_a_confusable_id_is_a_removal(scenario: Scenario) -> None:
    cal = calibration_jsonl().replace('"id": "R1"', '"id": "R\u0031\u200b"')
    head = scenario.git.commit({CALIBRATION: cal}, "R1 -> R1+ZWSP")
    result = _gate(scenario, head)
    assert result.code == 1, result.stdout + result.stderr


def test_an_item_moved_into_calibration_from_held_out_with_a_new_label_is_a_relabel(scenario: Scenario) -> None:
    held = json.dumps({"id": "H1", "input": "design H1", "output": "review H1", "label": "fail",
                       "split": "evaluation"}) + "\n"
    main = _on_main(scenario, {CALIBRATION: calibration_jsonl() + held}, "a held-out item")
    scenario.git("reset", "-q", "--hard", main)
    moved = json.dumps({"id": "H1", "input": "design H1", "output": "review H1", "label": "pass"}) + "\n"
    head = scenario.git.commit({CALIBRATION: calibration_jsonl() + moved}, "H1 into calibration, as pass")
    result = _gate(scenario, head)
    assert result.code == 1, result.stdout + result.stderr


# -- what the gate prints ----------------------------------------------------------------------

def test_an_added_item_id_cannot_become_a_link_or_mention_in_the_comment(scenario: Scenario) -> None:
    from markdown_it import MarkdownIt

    evil = "[Approve](https://evil.test/x) @acme/admins <img src=x> https://evil.test"
    added = json.dumps({"id": evil, "input": "design X", "output": "review X", "label": "pass"}) + "\n"
    head = scenario.git.commit({CALIBRATION: calibration_jsonl() + added}, "add an item")
    result = _gate(scenario, head)
    assert result.code == 0, result.stdout + result.stderr
    body = (Path(result.workspace) / result.outputs["comment"]).read_text()
    html = MarkdownIt("commonmark").enable(["table", "strikethrough"]).render(body)
    assert "<a " not in html.replace('<a href="https://github.test/', "") and "<img" not in html, html
    # GFM would autolink a bare URL or mention outside code: none may be left there.
    outside_code = re.sub(r"<code>.*?</code>", "", html, flags=re.DOTALL)
    assert "https://evil.test" not in outside_code and "@acme/admins" not in outside_code, outside_code


# -- the record as the gate replays it, not line by line --------------------------------------

def _superseded(answer_then: str) -> str:
    """The base record with (A, R1) recorded twice: first `answer_then`, then corrected to "no"."""
    lines = verdicts_jsonl(TEXTS).splitlines(keepends=True)
    return _verdict("A", "R1", answer_then) + "".join(lines)


@pytest.mark.parametrize("dressing", [
    {"item_hash": "sha256:" + "0" * 16}, {"task_hash": "0" * 16},
    {"sample": 1},
    {"judge": "x:y", "prompt": "v0"},
], ids=["stale-item-hash", "other-task", "sample-1", "judge-key"])
def test_making_a_correction_line_stale_is_a_changed_answer(scenario: Scenario, dressing: dict) -> None:
    main = _on_main(scenario, {VERDICTS: _superseded("yes")}, "(A, R1) re-recorded: yes, then no")
    scenario.git("reset", "-q", "--hard", main)
    correction = _verdict("A", "R1", "no")
    record = (scenario.git.path / VERDICTS).read_text()
    assert record.count(correction) == 1
    first = scenario.git.commit({VERDICTS: record.replace(correction, _verdict("A", "R1", "no", **dressing))},
                                "annotate a verdict line")
    first_result = _gate(scenario, first)
    scenario.git("checkout", "-q", "main")
    scenario.git("merge", "-q", "--ff-only", "pr")
    scenario.base_sha = scenario.fake.base_sha = first
    scenario.git("checkout", "-q", "pr")
    second = scenario.git.commit({RUBRIC: rubric_yaml(["B", "C", "D"])}, "delete A")
    second_result = _gate(scenario, second)
    assert _closed(first_result.code, second_result.code), first_result.stdout + second_result.stdout


def test_flipping_a_keyed_answer_behind_a_keyless_one_is_a_changed_answer(scenario: Scenario) -> None:
    from rubric_gate.judges import PROMPT_VERSION
    from rubric_gate.verdicts import task_hash

    key = {"judge": JUDGE, "prompt": PROMPT_VERSION, "task_hash": task_hash("Review a cloud security design.")}
    keyed = "".join(_verdict(cid, item, "no" if cid in FAILS[item] else "yes", item_hash=_item_hash(item), **key)
                    for cid in "ABCD" for item in LABELS)
    main = _on_main(scenario, {VERDICTS: keyed + verdicts_jsonl(TEXTS)}, "commit the judge's verdicts, then the record")
    scenario.git("reset", "-q", "--hard", main)
    record = (scenario.git.path / VERDICTS).read_text()
    flipped_line = _verdict("A", "R1", "no", item_hash=_item_hash("R1"), **key)
    assert record.count(flipped_line) == 1
    first = scenario.git.commit({VERDICTS: record.replace(flipped_line, flipped_line.replace('"no"', '"yes"'))},
                                "flip the judge's (A, R1)")
    scenario.fake.judge = _truthful_judge
    inputs = {"judge": JUDGE, "env_extra": _judge_env(scenario)}
    first_result = _gate(scenario, first, **inputs)
    scenario.git("checkout", "-q", "main")
    scenario.git("merge", "-q", "--ff-only", "pr")
    scenario.base_sha = scenario.fake.base_sha = first
    scenario.git("checkout", "-q", "pr")
    second = scenario.git.commit({RUBRIC: rubric_yaml(["B", "C", "D"])}, "delete A")
    second_result = _gate(scenario, second, **inputs)
    assert _closed(first_result.code, second_result.code), first_result.stdout + second_result.stdout


def test_a_keyed_answer_inserted_before_the_record_is_a_changed_answer(scenario: Scenario) -> None:
    from rubric_gate.judges import PROMPT_VERSION
    from rubric_gate.verdicts import task_hash

    key = {"judge": JUDGE, "prompt": PROMPT_VERSION, "task_hash": task_hash("Review a cloud security design.")}
    planted = _verdict("A", "R1", "yes", item_hash=_item_hash("R1"), **key)
    first = scenario.git.commit({VERDICTS: planted + verdicts_jsonl(TEXTS)}, "a keyed line at the top")
    scenario.fake.judge = _truthful_judge
    inputs = {"judge": JUDGE, "env_extra": _judge_env(scenario)}
    first_result = _gate(scenario, first, **inputs)
    scenario.git("checkout", "-q", "main")
    scenario.git("merge", "-q", "--ff-only", "pr")
    scenario.base_sha = scenario.fake.base_sha = first
    scenario.git("checkout", "-q", "pr")
    second = scenario.git.commit({RUBRIC: rubric_yaml(["B", "C", "D"])}, "delete A")
    second_result = _gate(scenario, second, **inputs)
    assert _closed(first_result.code, second_result.code), first_result.stdout + second_result.stdout


# -- the verdict cache: only what the action judged ------------------------------------------

def test_a_cache_file_committed_once_is_not_saved_and_restored_as_the_judges(scenario: Scenario) -> None:
    import shutil

    from rubric_gate.judges import PROMPT_VERSION
    from rubric_gate.verdicts import task_hash

    key = {"judge": JUDGE, "prompt": PROMPT_VERSION, "task_hash": task_hash("Review a cloud security design.")}
    planted = _verdict("B", "R1", "no", item_hash=_item_hash("R1"), **key)
    cache = scenario.git.path / ".rubric-gate" / "cache"
    first = scenario.git.commit({".rubric-gate/cache/verdicts.jsonl": planted}, "plant a cache file")
    scenario.fake.judge = _truthful_judge
    inputs = {"judge": JUDGE, "env_extra": _judge_env(scenario)}
    assert _gate(scenario, first, **inputs).code == 2
    saved = scenario.tmp / "actions-cache"  # actions/cache/save, `if: always()`
    if cache.is_dir():
        shutil.copytree(cache, saved)
    scenario.git("rm", "-q", "--cached", ".rubric-gate/cache/verdicts.jsonl")
    shutil.rmtree(scenario.git.path / ".rubric-gate")
    second = scenario.git.commit({RUBRIC: rubric_yaml(["B", "C", "D"])}, "untrack it; delete A")
    if saved.is_dir():  # actions/cache/restore: the PR's own scope first
        shutil.copytree(saved, cache)
    result = _gate(scenario, second, **inputs)
    assert result.code == 1, result.stdout + result.stderr


# -- facts about the PR are read when the run starts ----------------------------------------

def test_a_re_run_after_main_moved_gates_against_the_current_base(scenario: Scenario) -> None:
    extra = {"A3": "Is every stored byte encrypted?"}
    fails = {item: checks | ({"A3"} if "A" in checks else set()) for item, checks in FAILS.items()}
    base = _on_main(scenario, {RUBRIC: rubric_yaml(["A", "A3", "B", "C", "D"], extra=extra),
                               VERDICTS: verdicts_jsonl({**TEXTS, **extra}, fails)}, "A3 duplicates A")
    scenario.git("reset", "-q", "--hard", base)
    second = scenario.git.commit({RUBRIC: rubric_yaml(["A", "B", "C", "D"], extra=extra)}, "PR 2: delete A3")
    event = scenario.event(second)  # the payload GitHub built when PR 2 was pushed: base = main then
    assert _gate(scenario, second).code == 0  # A still catches R1
    _on_main(scenario, {RUBRIC: rubric_yaml(["A3", "B", "C", "D"], extra=extra)}, "PR 1 merged: delete A")
    # The re-run replays the same payload; the API knows the base moved.
    result = scenario.run(second, payload=json.loads(event.read_text()))
    assert result.code == 1, result.stdout + result.stderr


# -- the judge's budget ------------------------------------------------------------------------

def test_a_decoy_rubric_spending_the_judge_budget_does_not_excuse_a_deletion(scenario: Scenario) -> None:
    """`rubrics/aaa.yaml` (gated first) has many checks and eats `max_judge_calls`; demo's pairs go
    unjudged, and the PR's own verdicts must not stand in for the judge's."""
    decoy_texts = {f"Z{i}": f"Decoy question number {i}?" for i in range(12)}
    decoy = rubric_yaml(list(decoy_texts), extra=decoy_texts).replace("id: demo", "id: aaa")
    lines = "".join(_verdict(t, item, "no" if item == "R1" else "yes") for t in (TEXTS["B"],) for item in LABELS)
    head = scenario.git.commit({"rubrics/aaa.yaml": decoy, RUBRIC: rubric_yaml(["B", "C", "D"]),
                                VERDICTS: verdicts_jsonl(TEXTS) + lines}, "a decoy; delete A")
    scenario.fake.judge = _truthful_judge
    result = _gate(scenario, head, judge=JUDGE, env_extra=_judge_env(scenario), max_judge_calls="30")
    assert result.code == 2, result.stdout + result.stderr


BLAMED = "Does the review mention a threat model?"  # the judge: "no" on R4, a correct item


def _judge_blaming_x(prompt: str) -> str:
    if BLAMED in prompt:
        return "no" if "review R4" in prompt else "yes"
    return _truthful_judge(prompt)


def test_removing_the_rubrics_judge_key_then_adding_a_blamed_check(scenario: Scenario) -> None:
    judged = rubric_yaml(["A", "B", "C", "D"], judge=JUDGE)
    main = _on_main(scenario, {RUBRIC: judged}, "demo is judged by its own key")
    scenario.git("reset", "-q", "--hard", main)
    scenario.fake.judge = _judge_blaming_x
    env = _judge_env(scenario)
    first = scenario.git.commit({RUBRIC: rubric_yaml(["A", "B", "C", "D"])}, "drop the judge key")
    first_result = _gate(scenario, first, env_extra=env)
    scenario.git("checkout", "-q", "main")
    scenario.git("merge", "-q", "--ff-only", "pr")
    scenario.base_sha = scenario.fake.base_sha = first
    scenario.git("checkout", "-q", "pr")
    lies = "".join(_verdict(BLAMED, item, "yes") for item in LABELS)
    second = scenario.git.commit({RUBRIC: rubric_yaml(["A", "B", "C", "D", "X"], extra={"X": BLAMED}),
                                  VERDICTS: verdicts_jsonl(TEXTS) + lies}, "add X, 'never fails'")
    second_result = _gate(scenario, second, env_extra=env)
    assert _closed(first_result.code, second_result.code), first_result.stdout + second_result.stdout


def test_with_the_judge_key_kept_a_blamed_check_is_rejected(scenario: Scenario) -> None:
    """The control for the test above: judged, X's blame on R4 is seen whatever the PR records."""
    main = _on_main(scenario, {RUBRIC: rubric_yaml(["A", "B", "C", "D"], judge=JUDGE)}, "judged by its own key")
    scenario.git("reset", "-q", "--hard", main)
    scenario.fake.judge = _judge_blaming_x
    lies = "".join(_verdict(BLAMED, item, "yes") for item in LABELS)
    head = scenario.git.commit({RUBRIC: rubric_yaml(["A", "B", "C", "D", "X"], extra={"X": BLAMED}, judge=JUDGE),
                                VERDICTS: verdicts_jsonl(TEXTS) + lies}, "add X, 'never fails'")
    result = _gate(scenario, head, env_extra=_judge_env(scenario))
    assert result.code == 1, result.stdout + result.stderr


def test_a_rubric_file_name_cannot_become_a_link_or_mention_in_the_comment(scenario: Scenario) -> None:
    from markdown_it import MarkdownIt

    name = "rubrics/[Approve](https:evil.test) @acme <b>x</b>.yaml"
    new = rubric_yaml(["A", "B"]).replace("id: demo", "id: named")
    head = scenario.git.commit({name: new}, "a new rubric with a loud name")
    result = _gate(scenario, head)
    body = (Path(result.workspace) / result.outputs["comment"]).read_text()
    assert "Approve" in body, body  # the file is reported
    html = MarkdownIt("commonmark").enable(["table", "strikethrough"]).render(body)
    assert "evil.test\"" not in html and "<b>x" not in html, html
    outside_code = re.sub(r"<code>.*?</code>", "", html, flags=re.DOTALL)
    assert "@acme " not in outside_code and "@acme<" not in outside_code, outside_code


# -- globs: what a case-sensitive checkout and every other tool reads ----------------------------

def test_a_case_only_move_out_of_the_glob_is_gated_as_a_deletion(scenario: Scenario) -> None:
    scenario.git("mv", RUBRIC, "RUBRICS-tmp.yaml")
    (scenario.git.path / "RUBRICS").mkdir()
    scenario.git("mv", "RUBRICS-tmp.yaml", "RUBRICS/demo.yaml")
    head = scenario.git.commit({}, "move the rubric to RUBRICS/")
    result = _gate(scenario, head)
    assert result.code == 1, result.stdout + result.stderr


# -- a configured judge that cannot run is no replay with the PR's verdicts -------------------------

def test_a_fork_cannot_stand_in_for_a_configured_judge_with_its_own_verdicts(scenario: Scenario) -> None:
    lies = "".join(_verdict(BLAMED, item, "yes") for item in LABELS)
    head = scenario.git.commit({RUBRIC: rubric_yaml(["A", "B", "C", "D", "X"], extra={"X": BLAMED}),
                                VERDICTS: verdicts_jsonl(TEXTS) + lies}, "add X, 'never fails'")
    result = _gate(scenario, head, fork=True, judge=JUDGE)  # no OPENAI_API_KEY on a fork's run
    assert result.code == 1, result.stdout + result.stderr


# -- a shallow checkout: the PR's file list is the PR's now, not the event's -------------------------

def test_a_re_run_of_an_older_head_in_a_shallow_checkout_gates_that_heads_changes(scenario: Scenario) -> None:
    import subprocess

    from tests.action.harness import run_in_process

    older = scenario.git.commit({RUBRIC: rubric_yaml(["B", "C", "D"])}, "delete A")
    event = scenario.event(older)  # the payload of the older head's run
    newer = scenario.git.commit({RUBRIC: rubric_yaml(["A", "B", "C", "D"]), "README.md": "x\n"}, "restore A")
    workspace = scenario.tmp / "shallow"
    subprocess.run(["git", "clone", "-q", "--depth", "1", "--branch", "pr", scenario.git.path.as_uri(),
                    str(workspace)], check=True, capture_output=True)
    scenario.fake.head_sha = newer  # the PR's head now
    code, stdout, stderr = run_in_process(scenario.env(event, workspace), workspace)
    runs = [r for r in scenario.fake.check_runs.values() if r["head_sha"] == older]
    assert code != 0 and all(r["conclusion"] != "success" for r in runs), stdout + stderr
