"""The verdict cache a PR's run reads: whatever a PR can plant in a restored cache (its own scope, a
committed file, a paraphrase store) is set aside, and the base branch's cache counts only when it is
the artifact of a push run on the base branch.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from rubric_gate.calibration.model import item_content_hash
from tests.action.harness import (
    CALIBRATION,
    DELETE_A,
    EXTRA,
    FRUIT_ITEMS,
    JUDGE,
    LABELS,
    RUBRIC,
    TEXTS,
    VERDICTS,
    ActionsRuns,
    Scenario,
    base_ref_env,
    calibration_jsonl,
    content_hash_of,
    fruit_rubric,
    jsonl_of_verdicts,
    judge_env,
    judged_by,
    keyed_line,
    keyword_labels,
    rejected_run,
    rubric_yaml,
    run_gated,
    standard_findings,
    truthful_judge,
    verdict_line,
    verdicts_jsonl,
    warm_main,
    with_cache_lines_appended,
)

# -- the verdict cache: only what the action judged ------------------------------------------

def test_a_cache_file_committed_once_is_not_saved_and_restored_as_the_judges(scenario: Scenario) -> None:
    import shutil

    from rubric_gate.judges import PROMPT_VERSION
    from rubric_gate.verdicts import task_hash

    key = {"judge": JUDGE, "prompt": PROMPT_VERSION, "task_hash": task_hash("Review a cloud security design.")}
    planted = verdict_line("B", "R1", "no", item_hash=content_hash_of("R1"), **key)
    cache = scenario.git.path / ".rubric-gate" / "cache"
    first = scenario.git.commit({".rubric-gate/cache/verdicts.jsonl": planted}, "plant a cache file")
    scenario.fake.judge = truthful_judge
    inputs = {"judge": JUDGE, "env_extra": judge_env(scenario)}
    assert run_gated(scenario, first, **inputs).code == 2
    saved = scenario.tmp / "actions-cache"  # actions/cache/save, `if: always()`
    if cache.is_dir():
        shutil.copytree(cache, saved)
    scenario.git("rm", "-q", "--cached", ".rubric-gate/cache/verdicts.jsonl")
    shutil.rmtree(scenario.git.path / ".rubric-gate")
    second = scenario.git.commit({RUBRIC: rubric_yaml(["B", "C", "D"])}, "untrack it; delete A")
    if saved.is_dir():  # actions/cache/restore: the PR's own scope first
        shutil.copytree(saved, cache)
    result = run_gated(scenario, second, **inputs)
    assert result.code == 1, result.stdout + result.stderr


# Closed: a gated run removes what `actions/cache` restored before any reader opens it (the
# base branch's cache is read as an artifact of a push run on it, `action.cache.provenance`); the batch
# journal it keeps binds each result to its pairs by the custom_id the provider echoes.


def _cache_file(scenario: Scenario) -> Path:
    cache = scenario.git.path / ".rubric-gate" / "cache"
    cache.mkdir(parents=True, exist_ok=True)
    return cache / "verdicts.jsonl"


def _plant_cache(scenario: Scenario, lines: str) -> None:
    """What `actions/cache/restore` puts in the workspace before the action runs: with the
    copy-paste workflow's restore-keys, the newest cache of the PR's own scope wins, and any
    workflow that runs on the PR (one the PR adds, even beside a ruleset's required workflow)
    can save one there."""
    path = _cache_file(scenario)
    path.write_text(path.read_text() + lines if path.exists() else lines, encoding="utf-8")


# -- caches another workflow of the PR can save: what a PR's run reads back --------------------

class TestPlantedCache:
    """The verdict cache a PR run restores comes from the PR's own cache scope first. The gate's
    own run saves there, and so can any other workflow that runs on the PR (it writes as the same
    `github-actions` app, with the same cache service). A planted line keyed exactly as the
    configured judge's (judge, prompt, task, item content) is, to the action, an answer that judge
    gave: it must only ever make the gate stricter."""

    def test_a_planted_keyed_catch_does_not_excuse_a_deletion(self, scenario: Scenario) -> None:
        inputs = judged_by(scenario)
        _plant_cache(scenario, keyed_line("B", "R1", "no"))
        head = scenario.git.commit(DELETE_A, "delete A")
        rejected_run(scenario, head, **inputs)

    def test_a_planted_keyed_yes_for_the_deleted_check_does_not_hide_its_catch(self, scenario: Scenario) -> None:
        inputs = judged_by(scenario)
        _plant_cache(scenario, keyed_line("A", "R1", "yes") + keyed_line("A", "R2", "yes"))
        head = scenario.git.commit(DELETE_A, "delete A")
        rejected_run(scenario, head, **inputs)

    def test_planted_answers_for_an_added_check_do_not_hide_its_blame(self, scenario: Scenario) -> None:
        """X, added, really answers no on the correct R4 (the judge says so); the cache says yes."""
        def judge(prompt: str) -> str:
            if EXTRA["X"] in prompt:
                return "no" if "review R4" in prompt else "yes"
            return truthful_judge(prompt)

        inputs = judged_by(scenario, judge)
        _plant_cache(scenario, "".join(keyed_line(EXTRA["X"], i, "yes") for i in LABELS))
        head = scenario.git.commit({RUBRIC: rubric_yaml(["A", "B", "C", "D", "X"], extra=EXTRA)}, "add X")
        rejected_run(scenario, head, **inputs)

    def test_a_planted_answer_does_not_excuse_a_changed_recorded_answer(self, scenario: Scenario) -> None:
        """The PR flips the record's (B, R1) to "no"; a planted keyed "no" poses as the judge's
        re-judging of exactly that pair in this run."""
        inputs = judged_by(scenario)
        _plant_cache(scenario, keyed_line("B", "R1", "no"))
        record = verdicts_jsonl(TEXTS).replace(
            json.dumps({"item": "R1", "check_text": TEXTS["B"], "answer": "yes"}),
            json.dumps({"item": "R1", "check_text": TEXTS["B"], "answer": "no"}))
        head = scenario.git.commit({VERDICTS: record}, "B no on R1")
        rejected_run(scenario, head, **inputs)

    def test_a_planted_answer_with_a_deletion_does_not_excuse_the_flip_it_needs(self, scenario: Scenario) -> None:
        """As above, and A deleted: the judge now scores every check at the base, and the planted
        line is what it "answered" for (B, R1)."""
        inputs = judged_by(scenario)
        _plant_cache(scenario, keyed_line("B", "R1", "no"))
        record = verdicts_jsonl(TEXTS).replace(
            json.dumps({"item": "R1", "check_text": TEXTS["B"], "answer": "yes"}),
            json.dumps({"item": "R1", "check_text": TEXTS["B"], "answer": "no"}))
        head = scenario.git.commit({VERDICTS: record, **DELETE_A}, "B no on R1; delete A")
        rejected_run(scenario, head, **inputs)

    def test_a_planted_panel_member_answer(self, scenario: Scenario) -> None:
        """A panel of two: the planted line answers for the second member."""
        second = "openai:fake-model-2"
        inputs = judged_by(scenario)
        inputs["judge"] = f"{JUDGE},{second}"
        scenario.fake.judge_by_model = {"fake-model-2": truthful_judge}
        _plant_cache(scenario, keyed_line("B", "R1", "no") + keyed_line("B", "R1", "no", judge=second))
        head = scenario.git.commit(DELETE_A, "delete A")
        rejected_run(scenario, head, **inputs)

    def test_planted_later_samples(self, scenario: Scenario) -> None:
        inputs = judged_by(scenario)
        _plant_cache(scenario, "".join(keyed_line("B", "R1", "no", sample=s) for s in (0, 1, 2)))
        head = scenario.git.commit(DELETE_A, "delete A")
        rejected_run(scenario, head, samples="3", **inputs)

    def test_a_planted_cache_in_a_fork_run_is_not_read_as_the_judge(self, scenario: Scenario) -> None:
        """A fork's run has no key: replay. The cache still holds a line keyed to the judge."""
        _plant_cache(scenario, keyed_line("B", "R1", "no"))
        head = scenario.git.commit(DELETE_A, "delete A")
        rejected_run(scenario, head, fork=True, judge=JUDGE)


    def test_a_planted_audit_does_not_pass_the_audit_rule(self, scenario: Scenario) -> None:
        """With `audit_rule`, an added check the audit finds unsound is rejected. The audit's
        answers are cached beside the verdicts (`audits.jsonl`), keyed by model, prompt, text and
        task: a planted record that says the check is sound poses as the judge's audit."""
        from tests.fakes.audit_llm import FakeAuditLLM

        llm = FakeAuditLLM().start()
        try:
            scenario.git("checkout", "-q", "main")
            base = scenario.git.commit({RUBRIC: None, "rubrics/fruit.yaml": fruit_rubric(
                [("apple", "The output mentions apple"), ("pear", "The output mentions pear")]),
                "calibration/fruit.jsonl": "".join(json.dumps({"id": i, "input": f"basket {i}", "output": o,
                                                               "label": lab}) + "\n" for i, o, lab in FRUIT_ITEMS)},
                "fruit rubric")
            scenario.git("checkout", "-q", "pr")
            scenario.git("merge", "-q", "--ff-only", "main")
            scenario.base_sha = scenario.fake.base_sha = base
            both = "The output mentions apple and pear"
            head = scenario.git.commit({"rubrics/fruit.yaml": fruit_rubric([
                ("apple", "The output mentions apple"), ("pear", "The output mentions pear"), ("both", both)])},
                "add a check that is not atomic")
            env = {"OPENAI_BASE_URL": llm.openai_url, "OPENAI_API_KEY": "sk-test", "RUBRIC_GATE_RETRY_BASE": "0.01"}
            inputs = {"judge": "openai:fake-model", "audit_rule": "true"}
            rejected_run(scenario, head, env_extra=env, **inputs)
            from rubric_gate.audit.run import (
                grounding_prompt_version,
                structure_prompt_version,
                task_context,
            )
            from tests.action.harness import FRUIT_TASK

            sound = {name: {"holds": True, "reason": "planted"}
                     for name in ("atomic", "consistent", "observable", "operational", "scoped")}
            records = [{"kind": "structure", "model": "openai:fake-model", "prompt": structure_prompt_version(),
                        "check_text": both, "context": task_context(FRUIT_TASK), "result": sound},
                       {"kind": "grounding", "model": "openai:fake-model", "prompt": grounding_prompt_version(),
                        "check_text": both, "context": task_context(FRUIT_TASK),
                        "result": {"grounded": True, "quote": "pear", "reason": "planted"}}]
            audits = scenario.git.path / ".rubric-gate" / "cache" / "audits.jsonl"
            audits.parent.mkdir(parents=True, exist_ok=True)
            audits.write_text("".join(json.dumps(r) + "\n" for r in records))
            rejected_run(scenario, head, env_extra=env, action="reopened", **inputs)
        finally:
            llm.stop()


    @pytest.mark.parametrize("fork", [False, True], ids=["same-repo", "fork"])
    def test_a_planted_blob_index_does_not_rewrite_the_base_record(self, scenario: Scenario, fork: bool) -> None:
        """The action keeps the parsed columns of each verdict blob it reads in the cache's index
        directory (`index/blob-<blob id>.sqlite`), travelling with the cache. A planted index for
        the merge base's own verdict blob (same id and size, (B, R1) "no") is the base record as
        the gate reads it: in replay, with no judge at all."""
        import os
        from unittest import mock

        from rubric_gate.verdicts.blobs import BlobCache, default_cache

        real = scenario.git("rev-parse", f"{scenario.base_sha}:{VERDICTS}")
        record = verdicts_jsonl(TEXTS)
        yes = json.dumps({"item": "R1", "check_text": TEXTS["B"], "answer": "yes"})
        forged = record.replace(yes, yes.replace('"answer": "yes"', '"answer":  "no"'))
        assert forged != record and len(forged.encode()) == len(record.encode())
        index = scenario.git.path / ".rubric-gate" / "cache" / "index"
        with mock.patch.dict(os.environ, {"RUBRIC_GATE_INDEX_DIR": str(index)}):
            BlobCache(persist=True).blob(real, forged.encode(), "forged")
        head = scenario.git.commit(DELETE_A, "delete A")
        default_cache().clear()  # a fresh process: nothing parsed yet
        try:
            rejected_run(scenario, head, fork=fork)
        finally:
            default_cache().clear()


    @pytest.mark.parametrize("forge", ["label", "split"])
    def test_a_planted_calibration_cache_does_not_relabel_the_base(self, scenario: Scenario, forge: str) -> None:
        """What validating a calibration set computed is cached by the sha256 of its bytes in the
        same index directory (`calibration-<digest>-<model>.json`: ids, labels, splits, hashes). A
        planted entry for the base's own bytes says R1, A's unique catch, is correct (or held out)."""
        import hashlib
        import os
        from unittest import mock

        from rubric_gate.calibration.index import cache_path

        index = scenario.git.path / ".rubric-gate" / "cache" / "index"
        digest = hashlib.sha256(calibration_jsonl().encode()).hexdigest()
        with mock.patch.dict(os.environ, {"RUBRIC_GATE_INDEX_DIR": str(index)}):
            path = cache_path(digest)
        assert path is not None
        items = list(LABELS)

        entry = {"ids": items, "hashes": [item_content_hash(f"design {i}", f"review {i}") for i in items],
                 "labels": "".join("f" if LABELS[i] == "fail" else "p" for i in items), "unplanned": [],
                 "splits": "-" * len(items), "meta": []}
        if forge == "label":
            entry["labels"] = "p" + entry["labels"][1:]
        else:
            entry["splits"] = "e" + entry["splits"][1:]
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(entry))
        head = scenario.git.commit(DELETE_A, "delete A")
        rejected_run(scenario, head)


    @pytest.mark.parametrize("swap", [pytest.param(True, id="swapped"),
                                      pytest.param(False, id="control")])
    def test_a_planted_batch_journal_maps_a_result_to_another_pair(self, scenario: Scenario, swap: bool) -> None:
        """With `batch: true` the journal of open batches lives in the cache too
        (`verdicts.jsonl.batches`): which request's answer is which (check, item) pair. Another
        workflow's save swaps two pairs of a batch in flight: X's "no" on R1 is collected as B's."""
        from tests.fakes.batches import FakeBatches

        outputs = {"R1": "privilege justified year", "R2": "justified year", "R3": "rest",
                   "R4": "rest privilege justified", "R5": "rest privilege justified year"}
        cal = "".join(json.dumps({"id": i, "input": f"design {i}", "output": o, "label": LABELS[i]}) + "\n"
                      for i, o in outputs.items())
        scenario.git("checkout", "-q", "main")
        base = scenario.git.commit({CALIBRATION: cal}, "outputs a keyword judge reads")
        scenario.git("checkout", "-q", "pr")
        scenario.git("merge", "-q", "--ff-only", "main")
        scenario.base_sha = scenario.fake.base_sha = base
        batches = FakeBatches().start()
        try:
            env = {"OPENAI_BASE_URL": batches.openai_url, "OPENAI_API_KEY": "sk-test",
                   "RUBRIC_GATE_BATCH_POLL_SECONDS": "0.05"}
            inputs = {"judge": JUDGE, "batch": "true", "env_extra": env}
            first = scenario.git.commit({RUBRIC: rubric_yaml(["A", "B", "C", "D", "X"], extra=EXTRA)}, "add X")
            batches.hold = True
            assert run_gated(scenario, first, batch_wait="0", **inputs).outputs["decision"] == "pending"
            journal = scenario.git.path / ".rubric-gate" / "cache" / "verdicts.jsonl.batches"
            records = [json.loads(line) for line in journal.read_text().splitlines()]
            slots = {}
            for record in records:
                for pair in record.get("pairs", []):
                    if pair[0] == "R1" and pair[3] in (TEXTS["B"], EXTRA["X"]):
                        slots[pair[3]] = pair
            assert set(slots) == {TEXTS["B"], EXTRA["X"]}, records[:3]
            b, x = slots[TEXTS["B"]], slots[EXTRA["X"]]
            if swap:
                b[2:4], x[2:4] = x[2:4], b[2:4]  # each pair's check id and text: swapped
            journal.write_text("".join(json.dumps(r) + "\n" for r in records))
            batches.hold = False
            second = scenario.git.commit(DELETE_A, "drop X; delete A")
            rejected_run(scenario, second, batch_wait="1", **inputs)
        finally:
            batches.stop()


class TestPlantedParaphrases:
    """With `paraphrases` and `min_stability`, an added check is rejected when the judge answers
    its paraphrases differently. The paraphrases live beside the cache file
    (`verdicts.paraphrases.jsonl`), restored with it."""

    @pytest.mark.parametrize("plant", [pytest.param(True, id="planted"), pytest.param(False, id="control")])
    def test_planted_paraphrases_do_not_make_an_unstable_check_stable(self, scenario: Scenario, plant: bool) -> None:
        from tests.fakes.llm import FakeLLM

        keyword_labels(scenario)
        x = "The output mentions rest"
        llm = FakeLLM(paraphrase_words={"rest": ["year", "year", "year"]}).start()
        try:
            if plant:
                cache = scenario.git.path / ".rubric-gate" / "cache"
                cache.mkdir(parents=True, exist_ok=True)
                lines = "".join(json.dumps({"check_text": x, "model": model, "index": index,
                                            "text": f"Reworded ({index + 1}): the output names rest"}) + "\n"
                                for model in (JUDGE, "fake-model") for index in range(4))
                (cache / "verdicts.paraphrases.jsonl").write_text(lines)
            head = scenario.git.commit({RUBRIC: rubric_yaml(["A", "B", "C", "D", "X"], extra={"X": x})}, "add X")
            env = {"OPENAI_BASE_URL": llm.openai_url, "OPENAI_API_KEY": "sk-test", "RUBRIC_GATE_RETRY_BASE": "0.01"}
            rejected_run(scenario, head, judge=JUDGE, paraphrases="3", min_stability="0.9", env_extra=env)
        finally:
            llm.stop()


# -- the base branch's cache artifact: which push runs vouch for it -----------------------------

class TestCacheArtifactProvenance:
    """A PR's run reads the base branch's verdict cache as the `rubric-gate-verdict-cache`
    artifact of the newest successful `push` run whose `head_branch` is the base branch. A push
    of a *tag* named `main` runs every workflow `on: push` (tags included) from the tagged
    commit's own workflow files, and the runs API gives its `head_branch` as `main` too: a PR
    author with push access tags a commit of theirs whose workflow uploads that artifact."""

    def _planted_artifact(self, scenario: Scenario, *, head_sha: str) -> dict:
        runs = ActionsRuns(scenario)
        runs.add_run(event="push", branch="main", verdicts=keyed_line("B", "R1", "no"))
        runs.runs[0]["head_sha"] = head_sha
        return {"GITHUB_BASE_REF": "main", **judged_by(scenario)["env_extra"]}

    def test_a_push_run_of_a_tag_named_like_the_base_branch(self, scenario: Scenario) -> None:
        tagged = scenario.git.commit({"notes.txt": "a commit of mine, tagged main\n"}, "tag me")
        scenario.git("reset", "-q", "--hard", "HEAD~1")
        env = self._planted_artifact(scenario, head_sha=tagged)
        scenario.fake.judge = truthful_judge
        head = scenario.git.commit(DELETE_A, "delete A")
        rejected_run(scenario, head, judge=JUDGE, env_extra=env)

    def test_the_base_branchs_own_artifact_with_the_truth_changes_nothing(self, scenario: Scenario) -> None:
        """A control: main's own push run's cache, holding the judge's true (B, R1) yes."""

        runs = ActionsRuns(scenario)
        runs.add_run(event="push", branch="main", verdicts=keyed_line("B", "R1", "yes"))
        runs.runs[0]["head_sha"] = scenario.base_sha
        scenario.fake.judge = truthful_judge
        head = scenario.git.commit(DELETE_A, "delete A")
        rejected_run(scenario, head, judge=JUDGE, env_extra={"GITHUB_BASE_REF": "main", **judged_by(scenario)["env_extra"]})


# What lets a deletion of A through: B catching R1 (the keyed "no" the judge never gave).
PLANT = keyed_line("B", "R1", "no")


def _cache(scenario: Scenario, name: str = ".rubric-gate/cache") -> Path:
    path = scenario.git.path / name
    path.mkdir(parents=True, exist_ok=True)
    return path


# -- 1. the restored cache set aside, the journal kept ------------------------------------------

class TestSetAside:
    def test_journal_name_as_a_symlink_to_planted_verdicts(self, scenario: Scenario) -> None:
        inputs = judged_by(scenario)
        planted = scenario.git.path / "planted.jsonl"
        planted.write_text(PLANT)
        cache = _cache(scenario)
        (cache / "verdicts.jsonl").write_text(PLANT)
        os.symlink(planted, cache / "verdicts.jsonl.batches")
        head = scenario.git.commit(DELETE_A, "delete A")
        rejected_run(scenario, head, **inputs)
        assert not (cache / "verdicts.jsonl.batches").is_symlink()
        assert planted.read_text() == PLANT  # removed as a link, not through it

    def test_journal_name_as_a_directory_holding_verdicts(self, scenario: Scenario) -> None:
        inputs = judged_by(scenario)
        journal = _cache(scenario) / "verdicts.jsonl.batches"
        journal.mkdir()
        (journal / "verdicts.jsonl").write_text(PLANT)
        head = scenario.git.commit(DELETE_A, "delete A")
        rejected_run(scenario, head, **inputs)

    def test_cache_dir_as_a_symlink_to_planted_cache(self, scenario: Scenario) -> None:
        inputs = judged_by(scenario)
        elsewhere = scenario.git.path / "elsewhere"
        elsewhere.mkdir()
        (elsewhere / "verdicts.jsonl").write_text(PLANT)
        (scenario.git.path / ".rubric-gate").mkdir()
        os.symlink(elsewhere, scenario.git.path / ".rubric-gate" / "cache")
        head = scenario.git.commit(DELETE_A, "delete A")
        rejected_run(scenario, head, **inputs)

    def test_a_custom_verdict_cache_behind_a_symlinked_parent(self, scenario: Scenario) -> None:
        inputs = judged_by(scenario)
        real = scenario.git.path / "real-cache"
        (real / "sub").mkdir(parents=True)
        (real / "sub" / "verdicts.jsonl").write_text(PLANT)
        os.symlink(real, scenario.git.path / "linked")
        head = scenario.git.commit(DELETE_A, "delete A")
        rejected_run(scenario, head, verdict_cache="linked/sub", **inputs)

    @pytest.mark.parametrize("name", ["verdicts.jsonl.batches ", "Verdicts.jsonl.batches",
                                      "verdicts.jsonl.batches.tmp", "verdicts.jsonl"])
    def test_look_alike_journal_names(self, scenario: Scenario, name: str) -> None:
        inputs = judged_by(scenario)
        (_cache(scenario) / name).write_text(PLANT)
        head = scenario.git.commit(DELETE_A, "delete A")
        rejected_run(scenario, head, **inputs)

    def test_nested_planted_cache(self, scenario: Scenario) -> None:
        inputs = judged_by(scenario)
        nested = _cache(scenario) / "cache"
        nested.mkdir()
        (nested / "verdicts.jsonl").write_text(PLANT)
        head = scenario.git.commit(DELETE_A, "delete A")
        rejected_run(scenario, head, verdict_cache=".rubric-gate/cache", **inputs)

    def test_a_verdict_cache_outside_output_dir(self, scenario: Scenario) -> None:
        inputs = judged_by(scenario)
        (_cache(scenario, "ci-cache") / "verdicts.jsonl").write_text(PLANT)
        head = scenario.git.commit(DELETE_A, "delete A")
        rejected_run(scenario, head, verdict_cache="ci-cache", **inputs)

    def test_planted_verdicts_in_output_dir_itself(self, scenario: Scenario) -> None:
        inputs = judged_by(scenario)
        out = _cache(scenario, ".rubric-gate")
        (out / "verdicts.jsonl").write_text(PLANT)
        (out / "verdicts").mkdir()
        (out / "verdicts" / "verdicts.jsonl").write_text(PLANT)
        head = scenario.git.commit(DELETE_A, "delete A")
        rejected_run(scenario, head, **inputs)

    def test_a_planted_journal_without_batch_mode(self, scenario: Scenario) -> None:
        """The journal kept is only read by batch mode: a planted one with verdict-like lines."""
        inputs = judged_by(scenario)
        (_cache(scenario) / "verdicts.jsonl.batches").write_text(PLANT)
        head = scenario.git.commit(DELETE_A, "delete A")
        rejected_run(scenario, head, **inputs)


# -- 3. the base branch's cache artifact: which push runs vouch --------------------------------

def _side_commit(scenario: Scenario, merge: bool) -> str:
    """A commit off main (the PR author's): merged into main with a merge commit (so an ancestor
    of the new tip), or left off main (main pushed there once, then force-pushed back)."""
    scenario.git("checkout", "-q", "main")
    scenario.git("checkout", "-q", "-b", "side")
    side = scenario.git.commit({"notes/side.txt": "an intermediate commit of a merged PR\n"}, "side")
    scenario.git("checkout", "-q", "main")
    if merge:
        scenario.git("merge", "-q", "--no-ff", "-m", "merge side", "side")
        tip = scenario.git("rev-parse", "HEAD")
        scenario.base_sha = scenario.fake.base_sha = tip
    scenario.git("checkout", "-q", "pr")
    scenario.git("merge", "-q", "--ff-only", "main")
    return side


def _planted_artifact_pr(scenario: Scenario, head_sha_of_run, route=None) -> None:
    lines = warm_main(scenario)
    planted = [dict(v, answer="no") if (v["item"], v["check_text"]) == ("R4", TEXTS["C"]) else v for v in lines]
    runs = ActionsRuns(scenario)
    runs.add_run(event="push", branch="main", verdicts=jsonl_of_verdicts(planted), head_sha=head_sha_of_run(scenario))
    if route is not None:
        original = runs._route
        runs._route = lambda method, path: route(method, path) or original(method, path)  # type: ignore[method-assign]
    head = scenario.git.commit({VERDICTS: with_cache_lines_appended(planted)}, "record the 'cache's' verdicts")
    result = run_gated(scenario, head, judge="openai:fake-model", env_extra=base_ref_env(scenario))
    assert result.code == 1, result.stdout + result.stderr
    blocking = [f for f in standard_findings(result) if f["blocking"]]
    assert len(blocking) == 1 and "C on R4: yes -> no" in blocking[0]["message"], standard_findings(result)


class TestBaseArtifact:
    def test_a_run_on_a_commit_main_force_pushed_away(self, scenario: Scenario) -> None:
        side = _side_commit(scenario, merge=False)
        _planted_artifact_pr(scenario, lambda s: side)

    def test_a_run_on_a_descendant_of_the_tip(self, scenario: Scenario) -> None:
        """A tag `main` at a commit on top of main (the PR's own, say)."""
        def ahead(s: Scenario) -> str:
            s.git("checkout", "-q", "-b", "ahead", "main")
            sha = s.git.commit({"notes/ahead.txt": "x\n"}, "ahead")
            s.git("checkout", "-q", "pr")
            return sha
        _planted_artifact_pr(scenario, ahead)

    def test_a_run_on_an_unknown_commit(self, scenario: Scenario) -> None:
        _planted_artifact_pr(scenario, lambda s: "0" * 40)

    @pytest.mark.parametrize("status", [500, 404, 422])
    def test_a_compare_that_errors(self, scenario: Scenario, status: int) -> None:
        side = _side_commit(scenario, merge=False)
        scenario.fake._compare = lambda base, head: (status, {"message": "boom"})  # type: ignore[method-assign]
        _planted_artifact_pr(scenario, lambda s: side)

    def test_a_tag_named_main_at_a_merged_intermediate_commit(self, scenario: Scenario) -> None:
        side = _side_commit(scenario, merge=True)
        _planted_artifact_pr(scenario, lambda s: side)


# -- the verdict cache a PR's run restores is no evidence ------------------------------------------

def test_a_pr_scoped_cache_with_a_line_keyed_to_the_judge_cannot_excuse_a_deletion(scenario: Scenario) -> None:
    from tests.action.harness import judged_by, keyed_line

    cache = scenario.git.path / ".rubric-gate" / "cache"
    cache.mkdir(parents=True)
    (cache / "verdicts.jsonl").write_text(keyed_line("B", "R1", "no"))  # as restored from the PR's cache scope
    head = scenario.git.commit({RUBRIC: rubric_yaml(["B", "C", "D"])}, "delete A")
    result = scenario.run(head, **judged_by(scenario))
    assert result.code == 1 and result.outputs["decision"] == "fail", result.stdout + result.stderr


def test_a_pr_scoped_cache_cannot_rewrite_the_base_record_through_the_blob_index(scenario: Scenario) -> None:
    import os
    import sys
    from unittest import mock

    from rubric_gate.verdicts.blobs import BlobCache

    real = verdicts_jsonl(TEXTS)
    honest = json.dumps({"item": "R1", "check_text": TEXTS["B"], "answer": "yes"})
    forged = real.replace(honest, honest.replace('"answer": "yes"}', '"answer": "no" }')).encode()  # B catches R1
    assert len(forged) == len(real.encode()) and forged != real.encode()
    blob_id = scenario.git("rev-parse", f"{scenario.base_sha}:{VERDICTS}")
    index = scenario.git.path / ".rubric-gate" / "cache" / "index"  # as restored from the PR's cache scope
    with mock.patch.dict(os.environ, {"RUBRIC_GATE_INDEX_DIR": str(index)}):
        BlobCache(persist=True).data(blob_id, forged, "forged")
    head = scenario.git.commit({RUBRIC: rubric_yaml(["B", "C", "D"])}, "delete A")
    # A process of its own: this one's blob cache may hold the honest parse of the same blob.
    result = scenario.run(head, command=[sys.executable, "-m", "rubric_gate", "action"])
    assert result.code == 1 and result.outputs["decision"] == "fail", result.stdout + result.stderr
