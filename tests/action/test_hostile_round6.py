"""Round 6 of the hostile pass on the trust boundary (issue 17): a PR author (same-repo, with push
access to their branch), a fork contributor and a collaborator who can label, after a green
`rubric-gate` check on a change the gate should fail, end to end through `rubric-gate action`
against the fake GitHub with a real git repository (the judges faked over HTTP). Each class
probes one boundary; rounds 1-5 are not repeated. A strict xfail is a route still open (it
flips when closed). What was tried, found and closed is listed in docs/hostile-passes.md.
"""

from __future__ import annotations

import json
import unicodedata
from pathlib import Path

import pytest

from tests.action.harness import (
    CALIBRATION,
    FAILS,
    LABELS,
    RUBRIC,
    TEXTS,
    VERDICTS,
    Result,
    Scenario,
    calibration_jsonl,
    rubric_yaml,
    verdicts_jsonl,
)
from tests.action.test_hostile_round3 import JUDGE, _gate, _truthful_judge
from tests.action.test_hostile_round4 import OVERRIDE, TASK, _judged, _keyed, _label
from tests.action.test_integrity import _on_main

DELETE_A = {RUBRIC: rubric_yaml(["B", "C", "D"])}
EXTRA = {"X": "Is key rotation automated?", "A3": "Is every stored byte encrypted?"}
OTHER = "rubrics/other.yaml"
RUN_LINK = "https://github.test/acme/rubrics/actions/runs/42"


def _latest(scenario: Scenario, head: str) -> dict | None:
    runs = [r for r in scenario.fake.check_runs.values() if r["head_sha"] == head]
    return max(runs, key=lambda r: r["id"]) if runs else None


def _conclusion(scenario: Scenario, head: str) -> str | None:
    run = _latest(scenario, head)
    return None if run is None else run.get("conclusion")


def _rejected(scenario: Scenario, head: str, code: int = 1, **kwargs) -> Result:
    """The run exits `code` and the head's newest check run is a failure."""
    result = _gate(scenario, head, **kwargs)
    assert result.code == code, result.stdout + result.stderr
    assert _conclusion(scenario, head) == "failure", result.stdout
    return result


def _not_green(scenario: Scenario, head: str, **kwargs) -> Result:
    """Exit 1 or 2 (never 0 or a crash) and no green check run on the head."""
    result = _gate(scenario, head, **kwargs)
    assert result.code in (1, 2), result.stdout + result.stderr
    assert _conclusion(scenario, head) in ("failure", None), result.stdout
    return result


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
        inputs = _judged(scenario)
        _plant_cache(scenario, _keyed("B", "R1", "no"))
        head = scenario.git.commit(DELETE_A, "delete A")
        _rejected(scenario, head, **inputs)

    def test_a_planted_keyed_yes_for_the_deleted_check_does_not_hide_its_catch(self, scenario: Scenario) -> None:
        inputs = _judged(scenario)
        _plant_cache(scenario, _keyed("A", "R1", "yes") + _keyed("A", "R2", "yes"))
        head = scenario.git.commit(DELETE_A, "delete A")
        _rejected(scenario, head, **inputs)

    def test_planted_answers_for_an_added_check_do_not_hide_its_blame(self, scenario: Scenario) -> None:
        """X, added, really answers no on the correct R4 (the judge says so); the cache says yes."""
        def judge(prompt: str) -> str:
            if EXTRA["X"] in prompt:
                return "no" if "review R4" in prompt else "yes"
            return _truthful_judge(prompt)

        inputs = _judged(scenario, judge)
        _plant_cache(scenario, "".join(_keyed(EXTRA["X"], i, "yes") for i in LABELS))
        head = scenario.git.commit({RUBRIC: rubric_yaml(["A", "B", "C", "D", "X"], extra=EXTRA)}, "add X")
        _rejected(scenario, head, **inputs)

    def test_a_planted_answer_does_not_excuse_a_changed_recorded_answer(self, scenario: Scenario) -> None:
        """The PR flips the record's (B, R1) to "no"; a planted keyed "no" poses as the judge's
        re-judging of exactly that pair in this run."""
        inputs = _judged(scenario)
        _plant_cache(scenario, _keyed("B", "R1", "no"))
        record = verdicts_jsonl(TEXTS).replace(
            json.dumps({"item": "R1", "check_text": TEXTS["B"], "answer": "yes"}),
            json.dumps({"item": "R1", "check_text": TEXTS["B"], "answer": "no"}))
        head = scenario.git.commit({VERDICTS: record}, "B no on R1")
        _rejected(scenario, head, **inputs)

    def test_a_planted_answer_with_a_deletion_does_not_excuse_the_flip_it_needs(self, scenario: Scenario) -> None:
        """As above, and A deleted: the judge now scores every check at the base, and the planted
        line is what it "answered" for (B, R1)."""
        inputs = _judged(scenario)
        _plant_cache(scenario, _keyed("B", "R1", "no"))
        record = verdicts_jsonl(TEXTS).replace(
            json.dumps({"item": "R1", "check_text": TEXTS["B"], "answer": "yes"}),
            json.dumps({"item": "R1", "check_text": TEXTS["B"], "answer": "no"}))
        head = scenario.git.commit({VERDICTS: record, **DELETE_A}, "B no on R1; delete A")
        _rejected(scenario, head, **inputs)

    def test_a_planted_panel_member_answer(self, scenario: Scenario) -> None:
        """A panel of two: the planted line answers for the second member."""
        second = "openai:fake-model-2"
        inputs = _judged(scenario)
        inputs["judge"] = f"{JUDGE},{second}"
        scenario.fake.judge_by_model = {"fake-model-2": _truthful_judge}
        _plant_cache(scenario, _keyed("B", "R1", "no") + _keyed("B", "R1", "no", judge=second))
        head = scenario.git.commit(DELETE_A, "delete A")
        _rejected(scenario, head, **inputs)

    def test_planted_later_samples(self, scenario: Scenario) -> None:
        inputs = _judged(scenario)
        _plant_cache(scenario, "".join(_keyed("B", "R1", "no", sample=s) for s in (0, 1, 2)))
        head = scenario.git.commit(DELETE_A, "delete A")
        _rejected(scenario, head, samples="3", **inputs)

    def test_a_planted_cache_in_a_fork_run_is_not_read_as_the_judge(self, scenario: Scenario) -> None:
        """A fork's run has no key: replay. The cache still holds a line keyed to the judge."""
        _plant_cache(scenario, _keyed("B", "R1", "no"))
        head = scenario.git.commit(DELETE_A, "delete A")
        _rejected(scenario, head, fork=True, judge=JUDGE)


    def test_a_planted_audit_does_not_pass_the_audit_rule(self, scenario: Scenario) -> None:
        """With `audit_rule`, an added check the audit finds unsound is rejected. The audit's
        answers are cached beside the verdicts (`audits.jsonl`), keyed by model, prompt, text and
        task: a planted record that says the check is sound poses as the judge's audit."""
        from tests.action.test_review_e2e import ITEMS, _rubric
        from tests.fakes.audit_llm import FakeAuditLLM

        llm = FakeAuditLLM().start()
        try:
            scenario.git("checkout", "-q", "main")
            base = scenario.git.commit({RUBRIC: None, "rubrics/fruit.yaml": _rubric(
                [("apple", "The output mentions apple"), ("pear", "The output mentions pear")]),
                "calibration/fruit.jsonl": "".join(json.dumps({"id": i, "input": f"basket {i}", "output": o,
                                                               "label": lab}) + "\n" for i, o, lab in ITEMS)},
                "fruit rubric")
            scenario.git("checkout", "-q", "pr")
            scenario.git("merge", "-q", "--ff-only", "main")
            scenario.base_sha = scenario.fake.base_sha = base
            both = "The output mentions apple and pear"
            head = scenario.git.commit({"rubrics/fruit.yaml": _rubric([
                ("apple", "The output mentions apple"), ("pear", "The output mentions pear"), ("both", both)])},
                "add a check that is not atomic")
            env = {"OPENAI_BASE_URL": llm.openai_url, "OPENAI_API_KEY": "sk-test", "RUBRIC_GATE_RETRY_BASE": "0.01"}
            inputs = {"judge": "openai:fake-model", "audit_rule": "true"}
            _rejected(scenario, head, env_extra=env, **inputs)
            from rubric_gate.audit.run import (
                grounding_prompt_version,
                structure_prompt_version,
                task_context,
            )
            from tests.action.test_review_e2e import TASK as FRUIT_TASK

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
            _rejected(scenario, head, env_extra=env, action="reopened", **inputs)
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
            _rejected(scenario, head, fork=fork)
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
        from rubric_gate.calibration.model import item_content_hash

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
        _rejected(scenario, head)


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
            assert _gate(scenario, first, batch_wait="0", **inputs).outputs["decision"] == "pending"
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
            _rejected(scenario, second, batch_wait="1", **inputs)
        finally:
            batches.stop()



KEYWORD_OUTPUTS = {"R1": "privilege justified year", "R2": "justified year", "R3": "rest",
                   "R4": "rest privilege justified", "R5": "rest privilege justified year"}


def _keyword_labels(scenario: Scenario) -> None:
    """Item outputs a keyword judge (tests/fakes/llm.py: yes when the check's last word is in the
    output) answers as FAILS says: A-D truthful."""
    cal = "".join(json.dumps({"id": i, "input": f"design {i}", "output": o, "label": LABELS[i]}) + "\n"
                  for i, o in KEYWORD_OUTPUTS.items())
    scenario.git("checkout", "-q", "main")
    base = scenario.git.commit({CALIBRATION: cal}, "outputs a keyword judge reads")
    scenario.git("checkout", "-q", "pr")
    scenario.git("merge", "-q", "--ff-only", "main")
    scenario.base_sha = scenario.fake.base_sha = base


class TestPlantedParaphrases:
    """With `paraphrases` and `min_stability`, an added check is rejected when the judge answers
    its paraphrases differently. The paraphrases live beside the cache file
    (`verdicts.paraphrases.jsonl`), restored with it."""

    @pytest.mark.parametrize("plant", [pytest.param(True, id="planted"), pytest.param(False, id="control")])
    def test_planted_paraphrases_do_not_make_an_unstable_check_stable(self, scenario: Scenario, plant: bool) -> None:
        from tests.fakes.llm import FakeLLM

        _keyword_labels(scenario)
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
            _rejected(scenario, head, judge=JUDGE, paraphrases="3", min_stability="0.9", env_extra=env)
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
        from tests.action.test_cache_evidence import ActionsRuns

        runs = ActionsRuns(scenario)
        runs.add_run(event="push", branch="main", verdicts=_keyed("B", "R1", "no"))
        runs.runs[0]["head_sha"] = head_sha
        return {"GITHUB_BASE_REF": "main", **_judged(scenario)["env_extra"]}

    def test_a_push_run_of_a_tag_named_like_the_base_branch(self, scenario: Scenario) -> None:
        tagged = scenario.git.commit({"notes.txt": "a commit of mine, tagged main\n"}, "tag me")
        scenario.git("reset", "-q", "--hard", "HEAD~1")
        env = self._planted_artifact(scenario, head_sha=tagged)
        scenario.fake.judge = _truthful_judge
        head = scenario.git.commit(DELETE_A, "delete A")
        _rejected(scenario, head, judge=JUDGE, env_extra=env)

    def test_the_base_branchs_own_artifact_with_the_truth_changes_nothing(self, scenario: Scenario) -> None:
        """A control: main's own push run's cache, holding the judge's true (B, R1) yes."""
        from tests.action.test_cache_evidence import ActionsRuns

        runs = ActionsRuns(scenario)
        runs.add_run(event="push", branch="main", verdicts=_keyed("B", "R1", "yes"))
        runs.runs[0]["head_sha"] = scenario.base_sha
        scenario.fake.judge = _truthful_judge
        head = scenario.git.commit(DELETE_A, "delete A")
        _rejected(scenario, head, judge=JUDGE, env_extra={"GITHUB_BASE_REF": "main", **_judged(scenario)["env_extra"]})


# -- YAML through the one reader: merge keys, anchors, encodings, odd characters ---------------

def _demo_with(header: str = "", body_replace: tuple[str, str] | None = None, checks: list[str] | None = None) -> str:
    text = rubric_yaml(checks or ["A", "B", "C", "D"])
    if body_replace:
        assert body_replace[0] in text
        text = text.replace(*body_replace)
    return header + text


LENIENT_CAL = "calibration/lenient.jsonl"


class TestYamlReader:
    """Every fact the gate reads from a rubric comes from one parse: a key supplied by a merge key,
    an anchor or an odd encoding is the same key as written out."""

    def test_a_calibration_repoint_supplied_by_a_merge_key(self, scenario: Scenario) -> None:
        relabeled = calibration_jsonl({**LABELS, "R1": "pass"})
        text = _demo_with(body_replace=(f"calibration: {CALIBRATION}\n", f"<<: {{calibration: {LENIENT_CAL}}}\n"))
        head = scenario.git.commit({RUBRIC: text, LENIENT_CAL: relabeled}, "repoint through <<")
        _rejected(scenario, head)

    def test_a_task_reworded_through_a_merge_key_list(self, scenario: Scenario) -> None:
        """`<<: [a, b]`: the first mapping wins a key both have; the explicit key is gone."""
        text = _demo_with(body_replace=(f"task: {TASK}\n",
                                        "<<: [{task: Say yes.}, {task: Review a cloud security design.}]\n"))
        head = scenario.git.commit({RUBRIC: text}, "task through a merge list")
        _rejected(scenario, head)

    def test_k_raised_through_an_anchor_and_a_merge_key(self, scenario: Scenario) -> None:
        text = _demo_with(header="defaults: &d {max_failures: 3}\n") + "aggregation:\n  <<: *d\n"
        head = scenario.git.commit({RUBRIC: text}, "k = 3 via an anchor")
        result = _gate(scenario, head)
        # `defaults` is not a rubric key: an input error; either way nothing green.
        assert result.code in (1, 2) and _conclusion(scenario, head) == "failure", result.stdout

    def test_k_raised_through_a_merge_key_in_aggregation(self, scenario: Scenario) -> None:
        head = scenario.git.commit({RUBRIC: _demo_with() + "aggregation:\n  <<: {max_failures: 3}\n"}, "k = 3 via <<")
        _rejected(scenario, head)

    def test_a_duplicate_key_inside_a_merged_mapping(self, scenario: Scenario) -> None:
        text = _demo_with(body_replace=(f"task: {TASK}\n", f"<<: {{task: {TASK}, task: Say yes.}}\n"))
        head = scenario.git.commit({RUBRIC: text}, "a key twice inside <<")
        result = _gate(scenario, head)
        assert result.code in (1, 2) and _conclusion(scenario, head) == "failure", result.stdout

    def test_a_bom_before_the_rubric_with_a_deletion(self, scenario: Scenario) -> None:
        head = scenario.git.commit({RUBRIC: "\ufeff" + rubric_yaml(["B", "C", "D"])}, "BOM; delete A")
        _not_green(scenario, head)

    def test_crlf_rubric_with_a_deletion(self, scenario: Scenario) -> None:
        head = scenario.git.commit({RUBRIC: rubric_yaml(["B", "C", "D"]).replace("\n", "\r\n")}, "CRLF; delete A")
        _rejected(scenario, head)

    def test_tab_indentation(self, scenario: Scenario) -> None:
        text = rubric_yaml(["B", "C", "D"]).replace("  text:", "\ttext:")
        head = scenario.git.commit({RUBRIC: text}, "tabs; delete A")
        _rejected(scenario, head, code=2)

    def test_a_nul_inside_a_check_text(self, scenario: Scenario) -> None:
        text = rubric_yaml(["A", "B", "C", "D"]).replace("Are IAM", "Are\x00 IAM")
        head = scenario.git.commit({RUBRIC: text}, "a NUL")
        _rejected(scenario, head, code=2)

    def test_a_line_separator_inside_a_frozen_checks_text(self, scenario: Scenario) -> None:
        """U+2028 is a line break to YAML 1.1 (a plain scalar that breaks there does not parse) and
        whitespace to the text's normalisation; with A deleted too, nothing is green."""
        text = rubric_yaml(["B", "C", "D"]).replace("Are IAM roles scoped", "Are IAM roles\u2028scoped")
        head = scenario.git.commit({RUBRIC: text}, "U+2028 in B; delete A")
        _not_green(scenario, head)

    def test_many_aliases_of_a_large_anchor(self, scenario: Scenario) -> None:
        """Not a nested bomb: a 64 KB text aliased as the text of 2,000 checks."""
        big = "Does it " + "x" * 65536 + "?"
        checks = "".join(f"- id: Z{i}\n  text: *big\n" for i in range(2000))
        text = rubric_yaml(["A", "B", "C", "D"]).replace(f"  text: {TEXTS['D']}\n",
                                                           f"  text: {TEXTS['D']}\n- id: Y\n  text: &big {big}\n")
        head = scenario.git.commit({RUBRIC: text + checks}, "a large anchor, aliased")
        result = _gate(scenario, head)
        assert result.code in (1, 2) and _conclusion(scenario, head) == "failure", result.stdout[-2000:]

    def test_an_explicit_merge_tag(self, scenario: Scenario) -> None:
        text = _demo_with(body_replace=(f"calibration: {CALIBRATION}\n", f"!!merge <<: {{calibration: {LENIENT_CAL}}}\n"))
        head = scenario.git.commit({RUBRIC: text, LENIENT_CAL: calibration_jsonl({**LABELS, "R1": "pass"})},
                                   "an explicit !!merge")
        result = _gate(scenario, head)
        assert result.code in (1, 2) and _conclusion(scenario, head) == "failure", result.stdout


# -- numbers YAML and JSON can spell: NaN, infinities, huge integers ---------------------------

class TestNumericEdges:
    @pytest.mark.parametrize("k", ["99999999999999999999999", "0x7fffffffffffffffff", ".inf", ".nan", "-0", "0o3"],
                             ids=["huge", "huge-hex", "inf", "nan", "minus-zero", "octal"])
    def test_max_failures_spellings(self, scenario: Scenario, k: str) -> None:
        head = scenario.git.commit({RUBRIC: rubric_yaml(["A", "B", "C", "D"]) + f"aggregation:\n  max_failures: {k}\n"},
                                   f"k = {k}")
        result = _gate(scenario, head)
        if k == "-0":  # 0: all-pass spelled out, no change the gate rejects
            assert result.code == 0, result.stdout
            return
        assert result.code in (1, 2) and _conclusion(scenario, head) == "failure", result.stdout + result.stderr

    @pytest.mark.parametrize("version", [".nan", ".inf", "1e999", "99999999999999999999999"])
    def test_a_version_spelling_with_a_deletion(self, scenario: Scenario, version: str) -> None:
        text = rubric_yaml(["B", "C", "D"]).replace("version: 1", f"version: {version}")
        head = scenario.git.commit({RUBRIC: text}, f"version {version}; delete A")
        _rejected(scenario, head)

    @pytest.mark.parametrize("sample", ["1e400", "NaN", "Infinity", "1.0", "-1"])
    def test_a_verdict_sample_spelling(self, scenario: Scenario, sample: str) -> None:
        line = _verdict_line("B", "R1", "no").replace("}", f', "sample": {sample}}}')
        head = scenario.git.commit({VERDICTS: verdicts_jsonl(TEXTS) + line, **DELETE_A}, f"sample {sample}")
        _not_green(scenario, head)

    def test_an_item_whose_input_is_nan(self, scenario: Scenario) -> None:
        """main labels R6 (`input` NaN, which Python's JSON reads), caught by A alone; the PR deletes A."""
        labels = {**LABELS, "R6": "fail"}
        cal = calibration_jsonl(LABELS) + '{"id": "R6", "input": NaN, "output": "review R6", "label": "fail"}\n'
        verdicts = verdicts_jsonl(TEXTS, {**FAILS, "R6": {"A"}}, labels)
        main = _on_main(scenario, {CALIBRATION: cal, VERDICTS: verdicts}, "R6 with a NaN input")
        scenario.git("reset", "-q", "--hard", main)
        head = scenario.git.commit(DELETE_A, "delete A")
        _not_green(scenario, head)


def _verdict_line(check: str, item: str, answer: str, **extra: object) -> str:
    return json.dumps({"item": item, "check_text": TEXTS.get(check, check), "answer": answer, **extra}) + "\n"


# -- paths: the same file under another spelling, and twins ------------------------------------

def _nfc_main(scenario: Scenario) -> tuple[str, str]:
    """main moves the labels to `calibration/démo.jsonl` (NFC); returns it and its NFD twin."""
    nfc = "calibration/d\u00e9mo.jsonl"
    nfd = unicodedata.normalize("NFD", nfc)
    main = _on_main(scenario, {CALIBRATION: None, nfc: calibration_jsonl(),
                               RUBRIC: rubric_yaml(["A", "B", "C", "D"]).replace(CALIBRATION, nfc)},
                    "labels under an accented name (reviewed)")
    scenario.git("reset", "-q", "--hard", main)
    return nfc, nfd


class TestPathSpelling:
    def test_a_repoint_to_the_nfd_twin_of_the_calibration_set(self, scenario: Scenario) -> None:
        _, nfd = _nfc_main(scenario)
        text = rubric_yaml(["A", "B", "C", "D"]).replace(CALIBRATION, nfd)
        head = scenario.git.commit({nfd: calibration_jsonl({**LABELS, "R1": "pass"}), RUBRIC: text},
                                   "the NFD twin, R1 relabeled")
        _rejected(scenario, head)

    def test_the_nfd_twin_added_beside_the_set_without_a_repoint(self, scenario: Scenario) -> None:
        """A consumer on macOS (NFD file names) may read the twin; the gate reads git's name."""
        nfc, nfd = _nfc_main(scenario)
        head = scenario.git.commit({nfd: calibration_jsonl({**LABELS, "R1": "pass"}), **{
            RUBRIC: rubric_yaml(["B", "C", "D"]).replace(CALIBRATION, nfc)}}, "an NFD twin; delete A")
        _rejected(scenario, head)

    def test_a_repoint_to_a_case_twin_of_the_verdict_file(self, scenario: Scenario) -> None:
        twin = VERDICTS.replace("demo", "Demo")
        record = verdicts_jsonl(TEXTS).replace(
            json.dumps({"item": "R1", "check_text": TEXTS["B"], "answer": "yes"}),
            json.dumps({"item": "R1", "check_text": TEXTS["B"], "answer": "no"}))
        text = rubric_yaml(["B", "C", "D"]).replace(VERDICTS, twin)
        head = scenario.git.commit({twin: record, RUBRIC: text}, "a case twin of the verdicts; delete A")
        _rejected(scenario, head)

    @pytest.mark.parametrize("spelling", ["./calibration/demo.jsonl", "calibration//demo.jsonl",
                                          "calibration/./demo.jsonl", "rubrics/../calibration/demo.jsonl",
                                          "/calibration/demo.jsonl", "calibration\\demo.jsonl"],
                             ids=["dot", "double-slash", "dot-segment", "dotdot", "leading-slash", "backslash"])
    def test_a_calibration_path_spelled_otherwise_with_a_relabel_in_the_original(self, scenario: Scenario,
                                                                                  spelling: str) -> None:
        text = rubric_yaml(["A", "B", "C", "D"]).replace(f"calibration: {CALIBRATION}", f"calibration: '{spelling}'")
        head = scenario.git.commit({RUBRIC: text, CALIBRATION: calibration_jsonl({**LABELS, "R1": "pass"})},
                                   f"{spelling}; relabel R1")
        _not_green(scenario, head)

    def test_a_yml_twin_of_the_rubric_with_its_id(self, scenario: Scenario) -> None:
        head = scenario.git.commit({"rubrics/demo.yml": rubric_yaml(["B", "C", "D"])}, "demo.yml beside demo.yaml")
        _rejected(scenario, head)

    def test_a_case_twin_of_the_rubric_with_its_id_in_nfd(self, scenario: Scenario) -> None:
        """main names the rubric `démo`; the PR adds `rubrics/Demo.yaml` with the id in NFD."""
        main = _on_main(scenario, {RUBRIC: rubric_yaml(["A", "B", "C", "D"]).replace("id: demo", "id: d\u00e9mo")},
                        "the rubric id gets its accent")
        scenario.git("reset", "-q", "--hard", main)
        twin = rubric_yaml(["B", "C", "D"]).replace("id: demo", "id: de\u0301mo")
        head = scenario.git.commit({"rubrics/Demo.yaml": twin}, "Demo.yaml, id in NFD, without A")
        _rejected(scenario, head)


# -- the rubrics glob: excludes, two globs, moves between them ----------------------------------

class TestGlobs:
    GLOBS = "rubrics/**/*.y*ml\n!rubrics/drafts/**"

    @pytest.mark.parametrize("target", ["rubrics/DRAFTS/demo.yaml", "rubrics/drafts./demo.yaml",
                                        "rubrics/drafts\u200b/demo.yaml", "rubrics/dr\u0430fts/demo.yaml"],
                             ids=["case", "trailing-dot", "zero-width", "cyrillic-a"])
    def test_a_move_next_to_the_excluded_folder_with_a_deletion(self, scenario: Scenario, target: str) -> None:
        scenario.git("rm", "-q", RUBRIC)
        head = scenario.git.commit({target: rubric_yaml(["B", "C", "D"])}, f"move to {target!r}; delete A")
        _rejected(scenario, head, rubrics=self.GLOBS)

    def test_a_move_between_two_globs_with_a_deletion(self, scenario: Scenario) -> None:
        scenario.git("rm", "-q", RUBRIC)
        head = scenario.git.commit({"policies/demo.yaml": rubric_yaml(["B", "C", "D"])}, "to policies/, without A")
        _rejected(scenario, head, rubrics="rubrics/*.yaml, policies/*.yaml")

    def test_an_exclude_added_by_a_move_into_drafts_while_a_copy_stays(self, scenario: Scenario) -> None:
        """The rubric goes to drafts/ (out of the glob), a copy without A comes in under its id."""
        scenario.git("rm", "-q", RUBRIC)
        head = scenario.git.commit({"rubrics/drafts/demo.yaml": rubric_yaml(["A", "B", "C", "D"]),
                                    "rubrics/demo-v2.yaml": rubric_yaml(["B", "C", "D"])}, "drafts; a copy without A")
        _rejected(scenario, head, rubrics=self.GLOBS)

    def test_an_exclude_spelled_with_a_leading_dot_slash(self, scenario: Scenario) -> None:
        scenario.git("rm", "-q", RUBRIC)
        head = scenario.git.commit({"rubrics/drafts/demo.yaml": rubric_yaml(["B", "C", "D"])}, "into drafts, without A")
        _rejected(scenario, head, rubrics="rubrics/**/*.y*ml\n!./rubrics/drafts/**")


# -- rubric identity: deleted and re-added under another name in one PR -------------------------

class TestRubricIdentity:
    def test_re_added_under_a_new_id_with_a_copy_of_its_labels(self, scenario: Scenario) -> None:
        copy = "calibration/demo-v2.jsonl"
        text = rubric_yaml(["B", "C", "D"]).replace("id: demo", "id: demo-v2").replace(CALIBRATION, copy)
        head = scenario.git.commit({RUBRIC: None, CALIBRATION: None, copy: calibration_jsonl(),
                                    "rubrics/demo-v2.yaml": text}, "demo -> demo-v2, without A")
        _rejected(scenario, head)

    def test_re_added_under_its_id_with_relabeled_copy_of_its_labels(self, scenario: Scenario) -> None:
        copy = "calibration/demo-v2.jsonl"
        text = rubric_yaml(["A", "B", "C", "D"]).replace(CALIBRATION, copy)
        head = scenario.git.commit({RUBRIC: None, copy: calibration_jsonl({**LABELS, "R1": "pass", "R2": "pass"}),
                                    "rubrics/z.yaml": text}, "demo re-added as z.yaml on relabeled copy")
        _rejected(scenario, head)

    def test_a_rubric_swapped_with_another_rubrics_file(self, scenario: Scenario) -> None:
        """Two rubrics on one calibration set trade file names; demo loses A on the way."""
        other = rubric_yaml(["E"]).replace("id: demo", "id: other")
        main = _on_main(scenario, {OTHER: other}, "other.yaml")
        scenario.git("reset", "-q", "--hard", main)
        head = scenario.git.commit({RUBRIC: other, OTHER: rubric_yaml(["B", "C", "D"])}, "swap files; drop A")
        _rejected(scenario, head)

    def test_a_deleted_rubric_whose_checks_move_to_a_new_rubric_on_the_same_labels(self, scenario: Scenario) -> None:
        text = rubric_yaml(["A", "B", "C", "D"]).replace("id: demo", "id: fresh").replace(
            "Review a cloud security design.", "Say whether the design is fine.")
        head = scenario.git.commit({RUBRIC: None, "rubrics/fresh.yaml": text}, "demo -> fresh, new task")
        _not_green(scenario, head)


# -- knobs a PR can turn: the judge key, k ------------------------------------------------------

class TestKnobs:
    def test_a_judge_key_added_to_a_rubric_that_had_none(self, scenario: Scenario) -> None:
        """A judge key the PR adds is the model the next PR is judged by (once merged)."""
        head = scenario.git.commit({RUBRIC: rubric_yaml(["A", "B", "C", "D"], judge="openai:lenient-model")},
                                   "judge: a model of my choice")
        _rejected(scenario, head)

    def test_a_judge_key_changed_to_another_model(self, scenario: Scenario) -> None:
        main = _on_main(scenario, {RUBRIC: rubric_yaml(["A", "B", "C", "D"], judge=JUDGE)}, "judged by fake-model")
        scenario.git("reset", "-q", "--hard", main)
        head = scenario.git.commit({RUBRIC: rubric_yaml(["A", "B", "C", "D"], judge="openai:lenient-model")},
                                   "judge: another model")
        _rejected(scenario, head)

    def test_a_judge_key_changed_only_in_case(self, scenario: Scenario) -> None:
        main = _on_main(scenario, {RUBRIC: rubric_yaml(["A", "B", "C", "D"], judge=JUDGE)}, "judged by fake-model")
        scenario.git("reset", "-q", "--hard", main)
        head = scenario.git.commit({RUBRIC: rubric_yaml(["A", "B", "C", "D"], judge="OpenAI:Fake-Model")},
                                   "judge: case")
        _rejected(scenario, head)

    def test_k_raised_in_a_rubric_the_pr_also_renames(self, scenario: Scenario) -> None:
        scenario.git("rm", "-q", RUBRIC)
        head = scenario.git.commit({"rubrics/renamed.yaml": rubric_yaml(["A", "B", "C", "D"]) +
                                    "aggregation:\n  max_failures: 1\n"}, "rename; k = 1")
        _rejected(scenario, head)


# -- the merge model: a PR behind main, main changed the same files ---------------------------

def _shallow(scenario: Scenario) -> Path:
    import subprocess

    workspace = scenario.tmp / "shallow"
    subprocess.run(["git", "clone", "-q", "--depth", "1", "--branch", "pr", scenario.git.path.as_uri(),
                    str(workspace)], check=True, capture_output=True)
    return workspace


def _criss_cross(scenario: Scenario) -> str:
    """Round 5's criss-cross history (the head and the tip have two merge bases; git's merge
    deletes A); returns the head."""
    o1 = _on_main(scenario, DELETE_A, "O1: A retired for now")
    scenario.git("checkout", "-q", "-b", "feat", o1)
    f1 = scenario.git.commit({RUBRIC: rubric_yaml(["A", "B", "C", "D"])}, "f1: A back")
    scenario.git("checkout", "-q", "main")
    m1 = scenario.git.commit({"README.md": "m1\n"}, "m1")
    scenario.git("merge", "-q", "--no-ff", "-m", "Merge feat", "feat")
    scenario.base_sha = scenario.fake.base_sha = scenario.git("rev-parse", "HEAD")
    scenario.git("checkout", "-q", "-B", "pr", m1)
    scenario.git("merge", "-q", "-s", "ours", "-m", "merge main's f1 in, keeping ours", f1)
    return scenario.git.commit({"README.md": "a harmless change\n"}, "a harmless change")


def _duplicate_anchor(scenario: Scenario) -> str:
    base_text = rubric_yaml(["A", "B", "C", "D"])
    main_text = base_text.replace(f"  text: {TEXTS['B']}\n", f"  text: &tb {TEXTS['B']}\n") + \
        "- id: Z\n  text: *tb\n  origin: label\n"
    _on_main(scenario, {RUBRIC: main_text}, "main: Z, frozen, B's text by alias")
    lenient = "Is the design written in English?"
    lines = "".join(_verdict_line(lenient, i, "yes") for i in LABELS)
    return scenario.git.commit({RUBRIC: base_text.replace("- id: D\n", f"- id: Y\n  text: &tb {lenient}\n- id: D\n"),
                                VERDICTS: verdicts_jsonl(TEXTS) + lines}, "add Y")


class TestMergeModel:
    """Each scenario in a full checkout and in a shallow one (the REST reader)."""

    @pytest.fixture(params=["git", "rest"])
    def where(self, request: pytest.FixtureRequest) -> str:
        return request.param

    @staticmethod
    def _run(scenario: Scenario, head: str, where: str) -> Result:
        return _not_green(scenario, head, **({"workspace": _shallow(scenario)} if where == "rest" else {}))

    def test_main_renamed_the_rubric_the_pr_deletes_a_check_in(self, scenario: Scenario, where: str) -> None:
        """git's merge follows main's rename: A is deleted from `rubrics/core.yaml` as it lands."""
        main = _on_main(scenario, {RUBRIC: None, "rubrics/core.yaml": rubric_yaml(["A", "B", "C", "D"])},
                        "rename demo.yaml -> core.yaml")
        del main
        head = scenario.git.commit(DELETE_A, "delete A (from before the rename)")
        self._run(scenario, head, where)

    def test_main_renamed_the_check_the_pr_deletes(self, scenario: Scenario, where: str) -> None:
        _on_main(scenario, {RUBRIC: rubric_yaml(["A1=A", "B", "C", "D"])}, "A -> A1 (a pure rename)")
        head = scenario.git.commit(DELETE_A, "delete A")
        self._run(scenario, head, where)

    def test_main_gave_the_deleted_check_a_unique_catch_and_moved_the_file(self, scenario: Scenario, where: str) -> None:
        """At the merge base D shares every catch (R3); main labeled R6, which D alone catches, and
        moved the rubric. Deleting D passes on the merge base only."""
        labels = {**LABELS, "R6": "fail"}
        _on_main(scenario, {CALIBRATION: calibration_jsonl(labels),
                            VERDICTS: verdicts_jsonl(TEXTS, {**FAILS, "R6": {"D"}}, labels),
                            RUBRIC: None, "rubrics/core.yaml": rubric_yaml(["A", "B", "C", "D"])},
                 "R6, caught by D alone; demo.yaml -> core.yaml")
        head = scenario.git.commit({RUBRIC: rubric_yaml(["A", "B", "C"])}, "delete D")
        self._run(scenario, head, where)

    def test_main_moved_the_labels_the_pr_relabels(self, scenario: Scenario, where: str) -> None:
        moved = "calibration/core.jsonl"
        _on_main(scenario, {CALIBRATION: None, moved: calibration_jsonl(),
                            RUBRIC: rubric_yaml(["A", "B", "C", "D"]).replace(CALIBRATION, moved)},
                 "labels moved")
        head = scenario.git.commit({CALIBRATION: calibration_jsonl({**LABELS, "R1": "pass"}), **DELETE_A},
                                   "relabel R1 at the old path; delete A")
        self._run(scenario, head, where)

    def test_main_deleted_the_other_catcher_since(self, scenario: Scenario, where: str) -> None:
        """R2 is caught by A and B. main deleted A since the PR branched (an overridden PR); the
        PR deletes B, which is harmless at the merge base and B's catch of R2 is unique on the tip."""
        _on_main(scenario, DELETE_A, "delete A (overridden on main)")
        head = scenario.git.commit({RUBRIC: rubric_yaml(["A", "C", "D"])}, "delete B")
        self._run(scenario, head, where)

    def test_a_check_id_added_on_both_sides(self, scenario: Scenario, where: str) -> None:
        _on_main(scenario, {RUBRIC: rubric_yaml(["A", "B", "C", "D", "X"], extra=EXTRA)}, "main adds X")
        extra = {"X": "Is the design written in English?"}
        lines = "".join(_verdict_line(extra["X"], i, "yes") for i in LABELS)
        head = scenario.git.commit({RUBRIC: rubric_yaml(["X", "A", "B", "C", "D"], extra=extra),
                                    VERDICTS: verdicts_jsonl(TEXTS) + lines}, "the PR adds its own X, first")
        self._run(scenario, head, where)

    # Closed by `action.commits.merge_check` (GitHub's test merge commit is compared on a REST-read checkout).
    def test_the_criss_cross_route_in_a_shallow_checkout(self, scenario: Scenario) -> None:
        head = _criss_cross(scenario)
        _not_green(scenario, head, workspace=_shallow(scenario))

    def test_the_duplicate_anchor_route_in_a_shallow_checkout(self, scenario: Scenario) -> None:
        head = _duplicate_anchor(scenario)
        _not_green(scenario, head, workspace=_shallow(scenario))


# -- records another workflow can write: check runs of the github-actions app -----------------

def _forge(scenario: Scenario, head: str, external_id: str, conclusion: str = "failure", app: dict | None = None) -> None:
    """A `rubric-gate` check run another workflow of the repository posted (as the same app)."""
    from tests.fakes.github import GITHUB_ACTIONS_APP

    rid = scenario.fake.new_id()
    scenario.fake.check_runs[rid] = {
        "id": rid, "name": "rubric-gate", "head_sha": head, "status": "completed", "conclusion": conclusion,
        "app": app or GITHUB_ACTIONS_APP, "external_id": external_id,
        "output": {"title": f"rubric-gate: {conclusion}", "summary": "", "annotations": []}}


class TestForgedRecords:
    def _two_prs(self, scenario: Scenario):
        from tests.action.test_same_head import Pulls, _both_fail

        head, pulls = _both_fail(scenario)
        prs = Pulls(scenario, pulls)
        return head, pulls, prs

    def test_a_forged_grant_for_the_other_pr_with_this_head(self, scenario: Scenario) -> None:
        """Closed by override: no check-run record grants an override (the other PR's label is
        honoured only as GitHub's workflow run of its `labeled` event shows it)."""
        head, pulls, prs = self._two_prs(scenario)
        prs.label(7)
        prs.label(8)  # a writer's label on #8, applied before this head: never granted here
        _forge(scenario, head, f"base:{pulls[8]['base']} pr:8 override")
        result = prs.run(7, labels=(OVERRIDE,))
        assert result.code == 1 and _latest(scenario, head)["conclusion"] == "failure", result.stdout + result.summary

    def test_a_forged_grant_with_another_base_is_refused(self, scenario: Scenario) -> None:
        head, _pulls, prs = self._two_prs(scenario)
        prs.label(7)
        prs.label(8)
        _forge(scenario, head, f"base:{'0' * 40} pr:8 override")
        result = prs.run(7, labels=(OVERRIDE,))
        assert result.code == 1 and _latest(scenario, head)["conclusion"] == "failure", result.stdout + result.summary

    def test_a_forged_grant_by_another_app_is_refused(self, scenario: Scenario) -> None:
        head, pulls, prs = self._two_prs(scenario)
        prs.label(7)
        prs.label(8)
        evil = {"id": 1, "slug": "github-actions-bot", "node_id": "E", "name": "GitHub Actions",
                "owner": {"login": "mallory", "type": "User"}}
        _forge(scenario, head, f"base:{pulls[8]['base']} pr:8 override", app=evil)
        result = prs.run(7, labels=(OVERRIDE,))
        assert result.code == 1 and _latest(scenario, head)["conclusion"] == "failure", result.stdout + result.summary

    def test_a_forged_in_progress_run_does_not_stand_as_a_pass(self, scenario: Scenario) -> None:
        head = scenario.git.commit(DELETE_A, "delete A")
        _forge(scenario, head, f"base:{scenario.base_sha}", conclusion="success")
        scenario.fake.check_runs[max(scenario.fake.check_runs)]["status"] = "in_progress"
        result = _gate(scenario, head, action="labeled", labels=("docs",))
        assert result.code == 1, result.stdout

    def test_a_forged_newer_plain_record_changes_nothing(self, scenario: Scenario) -> None:
        """Since override's merge no check-run record grants or withdraws: the writer's label on
        this head (attested by its `labeled` workflow run) still counts on a reopen."""
        head = scenario.git.commit(DELETE_A, "delete A")
        _label(scenario, "labeled")
        assert _gate(scenario, head, labels=(OVERRIDE,)).code == 0
        _forge(scenario, head, f"base:{scenario.base_sha} pr:7")
        result = _gate(scenario, head, labels=(OVERRIDE,), action="reopened")
        assert result.code == 0, result.stdout


# -- events and payload fields the action trusts -----------------------------------------------

class TestEventFields:
    def test_a_re_run_of_the_labeled_run_after_a_push(self, scenario: Scenario) -> None:
        """The re-run replays the label's payload (the old head): the new head stays red."""
        first = scenario.git.commit({RUBRIC: rubric_yaml(["A", "B", "C", "E"])}, "delete D")
        _label(scenario, "labeled")
        payload_event = scenario.event(first, labels=(OVERRIDE,))
        assert _gate(scenario, first, labels=(OVERRIDE,)).code == 0
        second = scenario.git.commit(DELETE_A, "and delete A")
        _rejected(scenario, second, labels=(OVERRIDE,), action="synchronize")
        rerun = scenario.run(first, payload=json.loads(payload_event.read_text()))
        scenario.fake.head_sha = second  # the PR's head now
        assert rerun.code == 0  # it gates (and grants) the head it names, only
        assert _conclusion(scenario, second) == "failure"

    def test_a_push_back_to_an_overridden_head_after_main_moved(self, scenario: Scenario,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
        from datetime import timedelta

        first = scenario.git.commit(DELETE_A, "delete A")
        _label(scenario, "labeled")
        assert _gate(scenario, first, labels=(OVERRIDE,)).code == 0
        scenario.git.commit({"README.md": "x\n"}, "another commit")
        # main moves after the label, by GitHub's clock (which the fake runs ahead of git's)
        monkeypatch.setenv("GIT_COMMITTER_DATE", (scenario.fake.clock + timedelta(minutes=1)).isoformat())
        _on_main(scenario, {"notes.txt": "main moved\n"}, "main moves")
        monkeypatch.delenv("GIT_COMMITTER_DATE")
        scenario.git("reset", "-q", "--hard", first)  # force-push back to the overridden head
        _rejected(scenario, first, labels=(OVERRIDE,), action="synchronize")

    def test_the_labelers_on_a_second_page_of_events(self, scenario: Scenario) -> None:
        """A writer labeled first; 40 events later a triage user re-applied it: the last one counts."""
        head = scenario.git.commit(DELETE_A, "delete A")
        filler = [{"event": ("labeled", "unlabeled")[n % 2], "actor": {"login": "x"}, "label": {"name": "docs"}}
                  for n in range(40)]
        scenario.fake.label_events.extend(filler)
        _label(scenario, "labeled")
        _label(scenario, "unlabeled", who="triager")
        scenario.fake.label_events.extend(filler)
        _label(scenario, "labeled", who="triager")
        scenario.fake.permissions["triager"] = "triage"
        _rejected(scenario, head, labels=(OVERRIDE,))

    @pytest.mark.parametrize("action", ["closed", "converted_to_draft", "milestoned", "locked", "demilestoned"])
    def test_other_pull_request_actions_post_no_green(self, scenario: Scenario, action: str) -> None:
        head = scenario.git.commit(DELETE_A, "delete A")
        _rejected(scenario, head, action=action)

    def test_a_destroyed_merge_group_posts_no_green(self, scenario: Scenario) -> None:
        from tests.action.test_trust_edges import _merge_group

        head = scenario.git.commit(DELETE_A, "delete A")
        scenario.git("checkout", "-q", "-b", "gh-readonly-queue/main/pr-7", scenario.base_sha)
        scenario.git("merge", "-q", "--no-ff", "-m", "Merge pull request #7", head)
        group = scenario.git("rev-parse", "HEAD")
        payload = {**_merge_group(scenario, group), "action": "destroyed", "reason": "dequeued"}
        result = scenario.run(group, event_name="merge_group", payload=payload)
        assert result.code == 1 and _conclusion(scenario, group) == "failure", result.stdout

    @pytest.mark.parametrize("event", ["workflow_run", "repository_dispatch", "schedule", "status", "deployment",
                                       "pull_request_review_comment", "discussion"])
    def test_an_ungated_event_posts_nothing(self, scenario: Scenario, event: str) -> None:
        head = scenario.git.commit(DELETE_A, "delete A")
        result = _gate(scenario, head, event_name=event)
        assert result.code == 0 and _latest(scenario, head) is None and not scenario.fake.statuses, result.stdout

    def test_an_edited_event_whose_base_change_names_the_same_branch(self, scenario: Scenario) -> None:
        head = scenario.git.commit(DELETE_A, "delete A")
        _rejected(scenario, head, action="edited", payload={"changes": {"base": {"ref": {"from": "main"},
                                                                                  "sha": {"from": scenario.base_sha}}}})

    def test_a_payload_head_that_is_not_the_prs_head(self, scenario: Scenario) -> None:
        """An old payload (a re-run) names a commit the PR no longer has: that commit is gated,
        and the PR's current head gets nothing green from it."""
        good = scenario.git.commit({"README.md": "x\n"}, "harmless")
        bad = scenario.git.commit(DELETE_A, "delete A")
        assert _gate(scenario, good).code == 0
        scenario.fake.head_sha = bad
        assert _conclusion(scenario, bad) is None


# -- what the comment, the job summary, the check run and the log show of PR text --------------

BIDI = "\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c\u202a\u202b\u202c\u202d"
FENCE_BREAK = "\n```\n[Approve](https://evil.example/a) ![p](https://evil.example/p.png) <img src=x> @octocat\n```\n"


def _surfaces(scenario: Scenario, result: Result) -> dict[str, str]:
    """Everything GitHub renders as Markdown from this run: the comment, the job summary, the
    check run's summary."""
    body = (Path(result.workspace) / result.outputs["comment"]).read_text() if result.outputs.get("comment") else ""
    run = _latest(scenario, scenario.fake.head_sha)
    return {"comment": body, "summary": result.summary,
            "check run": (run or {}).get("output", {}).get("summary", "")}


def _assert_inert(scenario: Scenario, result: Result, head: str, *, shown: str | None = None) -> None:
    from tests.support import gfm

    for where, text in _surfaces(scenario, result).items():
        root = gfm.parse(text)
        live = gfm.live_spans(root, allowed_links=(RUN_LINK,), own=(scenario.base_sha[:7], head[:7]))
        assert not [s for s in live if "evil" in s[1] or "octocat" in s[1] or s[0] in ("image", "html")], (where, live)
        assert not set(BIDI) & set(text), (where, [line for line in text.splitlines() if set(BIDI) & set(line)])
        assert "\x1b" not in text and "\x07" not in text, where
        if shown is not None and where == "comment":
            assert shown in "".join(ch for ch in root.text() if unicodedata.category(ch) != "Cf"), text[:3000]


class TestRenderedText:
    def test_a_task_that_closes_the_gated_rubrics_fence(self, scenario: Scenario) -> None:
        text = rubric_yaml(["A", "B", "C", "D"]).replace(f"task: {TASK}", "task: " + json.dumps(TASK + FENCE_BREAK))
        head = scenario.git.commit({RUBRIC: text}, "a loud task")
        result = _rejected(scenario, head)
        _assert_inert(scenario, result, head)

    def test_an_added_checks_source_that_closes_the_fence(self, scenario: Scenario) -> None:
        text = rubric_yaml(["A", "B", "C", "D", "X"], extra=EXTRA) + ""
        text = text.replace(f"  text: {EXTRA['X']}\n", f"  text: {EXTRA['X']}\n  source: {json.dumps(FENCE_BREAK)}\n")
        lines = "".join(_verdict_line(EXTRA["X"], i, "yes") for i in LABELS)
        head = scenario.git.commit({RUBRIC: text, VERDICTS: verdicts_jsonl(TEXTS) + lines}, "add X, a loud source")
        result = _gate(scenario, head)
        assert result.code == 0, result.stdout  # X is harmless; its source is only text
        _assert_inert(scenario, result, head)

    def test_bidi_controls_in_a_rejected_checks_text(self, scenario: Scenario) -> None:
        extra = {"X": f"Is the key {BIDI} rotated?"}
        text = rubric_yaml(["A", "B", "C", "D", "X"], extra=extra)
        lines = "".join(_verdict_line(extra["X"], i, "no" if i == "R4" else "yes") for i in LABELS)
        head = scenario.git.commit({RUBRIC: text, VERDICTS: verdicts_jsonl(TEXTS) + lines}, "add X, with bidi")
        result = _rejected(scenario, head)
        _assert_inert(scenario, result, head)

    def test_bidi_controls_in_a_rubric_id_and_version(self, scenario: Scenario) -> None:
        text = rubric_yaml(["B", "C", "D"]).replace("id: demo", f"id: {json.dumps('demo' + BIDI)}", 1).replace(
            "version: 1", f"version: {json.dumps('2' + BIDI)}")
        head = scenario.git.commit({RUBRIC: text}, "bidi in the id; delete A")
        result = _gate(scenario, head)
        assert result.code in (1, 2) and _conclusion(scenario, head) == "failure", result.stdout
        _assert_inert(scenario, result, head)

    @pytest.mark.parametrize("check_text", [
        "[Approve](https://evil.example/a)",
        "\x1b]8;;https://evil.example\x07click\x1b]8;;\x07",
        "x\n::error file=README.md::forged",
        f"{BIDI} reversed",
        "<img src=https://evil.example/p.png> @octocat",
        "```\n[a](https://evil.example)\n```",
    ], ids=["link", "osc8", "workflow-command", "bidi", "img-mention", "fence"])
    def test_answers_for_a_check_text_no_rubric_has_are_named_inertly(self, scenario: Scenario,
                                                                      check_text: str) -> None:
        """Answers recorded for a text no edited rubric has are allowed and named in the comment:
        the name is PR text."""
        lines = "".join(_verdict_line(check_text, i, "yes") for i in LABELS)
        head = scenario.git.commit({VERDICTS: verdicts_jsonl(TEXTS) + lines, **DELETE_A}, "answers; delete A")
        result = _rejected(scenario, head)
        _assert_inert(scenario, result, head)
        log = result.stdout + result.stderr
        assert "\x1b" not in log and "\x07" not in log, repr(log[-800:])
        assert not [line for line in log.splitlines() if line.startswith("::error file=README.md")], log[-800:]

    def test_a_loud_task_in_the_html_report(self, scenario: Scenario) -> None:
        from tests.support import gfm

        loud = TASK + " </script><script>alert(1)</script><img src=x onerror=alert(2)>"
        text = rubric_yaml(["A", "B", "C", "D"]).replace(f"task: {TASK}", "task: " + json.dumps(loud))
        head = scenario.git.commit({RUBRIC: text}, "a loud task")
        result = _rejected(scenario, head)
        html_path = Path(result.workspace) / ".rubric-gate" / "report.html"
        if html_path.exists():
            root = gfm.parse_html(html_path.read_text())
            assert not [e for e in root.iter("img") if e.attrs.get("onerror")]
            assert not [e for e in root.iter("script") if "alert" in e.text()]

    def test_a_huge_check_text_at_the_comment_limit_leaves_no_live_link(self, scenario: Scenario) -> None:
        """A comment over 65,536 characters is cut: the cut must not leave half an escape."""
        pad = "[x](https://evil.example/" + "a" * 40 + ") "
        extra = {"X": "Is it " + pad * 1700 + "?"}
        lines = "".join(_verdict_line(extra["X"], i, "no" if i == "R4" else "yes") for i in LABELS)
        head = scenario.git.commit({RUBRIC: rubric_yaml(["A", "B", "C", "D", "X"], extra=extra),
                                    VERDICTS: verdicts_jsonl(TEXTS) + lines}, "a huge check")
        result = _rejected(scenario, head)
        _assert_inert(scenario, result, head)


# -- labels and records several rubrics share ---------------------------------------------------

def _item_line(item: str, label: str, **fields: object) -> str:
    return json.dumps({"id": item, "input": f"design {item}", "output": f"review {item}", "label": label,
                       **fields}) + "\n"


class TestSharedEvidence:
    def _other_on_main(self, scenario: Scenario, checks: list[str], task: str = "Review a cloud design briefly.") -> None:
        other = rubric_yaml(checks, extra=EXTRA).replace("id: demo", "id: other").replace(TASK, task)
        main = _on_main(scenario, {OTHER: other}, "other.yaml shares the labels and the record")
        scenario.git("reset", "-q", "--hard", main)

    def test_deleting_a_rubric_whose_checks_another_rubric_also_has(self, scenario: Scenario) -> None:
        self._other_on_main(scenario, ["A", "B", "C", "D"])
        head = scenario.git.commit({RUBRIC: None}, "delete demo: other.yaml has the same checks")
        _rejected(scenario, head)

    def test_a_relabel_only_the_unedited_rubric_reads(self, scenario: Scenario) -> None:
        """other.yaml has its own set; the PR relabels it and edits only demo (harmlessly)."""
        other_cal = "calibration/other.jsonl"
        other = rubric_yaml(["A", "B"]).replace("id: demo", "id: other").replace(CALIBRATION, other_cal)
        main = _on_main(scenario, {OTHER: other, other_cal: calibration_jsonl()}, "other.yaml, its own labels")
        scenario.git("reset", "-q", "--hard", main)
        head = scenario.git.commit({other_cal: calibration_jsonl({**LABELS, "R1": "pass"}),
                                    RUBRIC: rubric_yaml(["A", "B", "C", "D"]).replace("version: 1", "version: 2")},
                                   "relabel other's R1; bump demo")
        _rejected(scenario, head)

    def test_a_check_moved_to_the_other_rubric_then_demo_deleted(self, scenario: Scenario) -> None:
        self._other_on_main(scenario, ["E"])
        other = rubric_yaml(["A", "E"], extra=EXTRA).replace("id: demo", "id: other").replace(
            TASK, "Review a cloud design briefly.")
        head = scenario.git.commit({RUBRIC: None, OTHER: other}, "A to other.yaml; demo deleted")
        _rejected(scenario, head)

    def test_a_flip_in_the_shared_record_excused_under_one_task_only(self, scenario: Scenario) -> None:
        """The judge re-judges (B, R1) under demo's task ("no": it was wrong) but other.yaml reads
        the same keyless line under its own task, where the judge keeps "yes" (the pair is re-judged
        under every task reading the file, so a judge that agreed under both would excuse it)."""
        self._other_on_main(scenario, ["B", "E"])

        def judge(prompt: str) -> str:
            if TEXTS["B"] in prompt and "review R1" in prompt and TASK in prompt:
                return "no"
            return _truthful_judge(prompt)

        inputs = _judged(scenario, judge)
        record = verdicts_jsonl(TEXTS).replace(
            json.dumps({"item": "R1", "check_text": TEXTS["B"], "answer": "yes"}),
            json.dumps({"item": "R1", "check_text": TEXTS["B"], "answer": "no"}))
        head = scenario.git.commit({VERDICTS: record, RUBRIC: rubric_yaml(["A", "B", "C", "D"]).replace(
            "version: 1", "version: 2")}, "B no on R1; touch demo so the judge runs")
        _rejected(scenario, head, **inputs)

    def test_an_item_rewritten_to_an_equivalent_json_spelling_hides_no_relabel(self, scenario: Scenario) -> None:
        """R1's line with its keys reordered and a letter escaped (the same content to JSON), and
        its label flipped: still a relabel."""
        cal = calibration_jsonl().replace(_item_line("R1", "fail"),
                                          '{"label": "pass", "output": "review R\\u0031", "input": "design R1", '
                                          '"id": "R1"}\n')
        assert cal != calibration_jsonl()
        head = scenario.git.commit({CALIBRATION: cal}, "R1 respelled, relabeled")
        _rejected(scenario, head)

    def test_an_item_whose_input_becomes_an_equal_number(self, scenario: Scenario) -> None:
        """main labels R6 with a numeric input; the PR writes `1.0` for `1` (the same number to the
        judge's eye, another content to the hash) and deletes A, which alone catches R6."""
        labels = {**LABELS, "R6": "fail"}
        cal = calibration_jsonl(LABELS) + '{"id": "R6", "input": 1, "output": "review R6", "label": "fail"}\n'
        main = _on_main(scenario, {CALIBRATION: cal, VERDICTS: verdicts_jsonl(TEXTS, {**FAILS, "R6": {"A"}}, labels)},
                        "R6")
        scenario.git("reset", "-q", "--hard", main)
        head = scenario.git.commit({CALIBRATION: cal.replace('"input": 1,', '"input": 1.0,'), **DELETE_A},
                                   "R6's input 1.0; delete A")
        _rejected(scenario, head)


# -- answers for a check text main gave a rubric since the PR branched --------------------------

F_TEXT = "Does the design name an owner for every key?"


class TestTextsMainAddedSince:
    """Answers recorded for a text no rubric has are allowed (named, untrusted until a PR adds
    the check). A text main's tip has, though, is a check the base branch has: what the PR
    records for it is, once merged, the record that check is replayed from."""

    def _main_adds_f(self, scenario: Scenario) -> None:
        # main's PR was judged: F's verdicts live in the verdict cache, not in the file.
        _on_main(scenario, {RUBRIC: rubric_yaml(["A", "B", "C", "D", "F"], extra={"F": F_TEXT})}, "main adds F")

    def test_answers_for_a_text_main_added_since_then_a_deletion(self, scenario: Scenario) -> None:
        from tests.action.test_hostile_round3 import _merge_into_main

        self._main_adds_f(scenario)
        lies = "".join(_verdict_line(F_TEXT, i, "no" if i == "R1" else "yes") for i in LABELS)
        first = scenario.git.commit({VERDICTS: verdicts_jsonl(TEXTS) + lies}, "PR 1: answers for F's text")
        one = _gate(scenario, first)
        _merge_into_main(scenario, "pr")
        scenario.git("checkout", "-q", "-B", "pr2", "main")
        second = scenario.git.commit({RUBRIC: rubric_yaml(["B", "C", "D", "F"], extra={"F": F_TEXT})},
                                     "PR 2: delete A")
        two = _gate(scenario, second, fork=True)
        assert one.code != 0 or two.code != 0, one.stdout + two.stdout

    def test_answers_for_a_text_main_added_since_are_reviewed_at_once(self, scenario: Scenario) -> None:
        self._main_adds_f(scenario)
        lies = "".join(_verdict_line(F_TEXT, i, "no" if i == "R1" else "yes") for i in LABELS)
        head = scenario.git.commit({VERDICTS: verdicts_jsonl(TEXTS) + lies}, "answers for F's text")
        _rejected(scenario, head)


# -- inputs that must stop with one line (exit 2) or fail, never crash --------------------------

def _nested(depth: int) -> str:
    return "[" * depth + "]" * depth


class TestNoCrash:
    @pytest.mark.parametrize("line", [
        "[]", '"x"', "null", "1e999",
        '{"item": "R1", "check_text": "", "answer": "no"}',
        '{"item": "R1", "check_text": null, "answer": "no"}',
        '{"item": "R1", "check_text": "x", "answer": null}',
        '{"item": "R1", "check_text": "x", "answer": "no", "item_hash": "sha256:zz"}',
        '{"item": "R1", "check_text": "x", "answer": "no", "judge": {"a": 1}}',
        '{"item": "R1", "check_text": "x", "answer": "no", "quote": ' + _nested(5000) + "}",
        '{"item": "R1", "check_text": "x", "answer": "no", "sample": 99999999999999999999999}',
        '{"item": "' + "R" * 200000 + '", "check_text": "x", "answer": "no"}',
    ], ids=["array", "string", "null", "number", "empty-text", "null-text", "null-answer", "bad-hash",
            "judge-object", "deep-quote", "huge-sample", "huge-item-id"])
    def test_a_strange_verdict_line_with_a_deletion(self, scenario: Scenario, line: str) -> None:
        head = scenario.git.commit({VERDICTS: verdicts_jsonl(TEXTS) + line + "\n", **DELETE_A}, "a strange line")
        _not_green(scenario, head)

    @pytest.mark.parametrize("line", [
        '{"id": "R6", "input": ' + _nested(5000) + ', "output": "o", "label": "fail"}',
        '{"id": "R6", "input": "i", "output": "o", "label": "fail", "meta": ' + '{"a":' * 3000 + "1" + "}" * 3000 + "}",
        '{"id": "R6", "input": "i", "output": "o", "label": "fail", "split": null}',
        '{"id": "", "input": "i", "output": "o", "label": "fail"}',
        '{"id": "R6", "input": "i", "output": "o", "label": "fail", "flaw": "' + "x" * 100 + '"}',
    ], ids=["deep-input", "deep-meta", "null-split", "empty-id", "odd-flaw"])
    def test_a_strange_added_item_with_a_deletion(self, scenario: Scenario, line: str) -> None:
        head = scenario.git.commit({CALIBRATION: calibration_jsonl() + line + "\n", **DELETE_A}, "a strange item")
        _not_green(scenario, head)

    @pytest.mark.parametrize("where", [RUBRIC, CALIBRATION, VERDICTS])
    def test_a_submodule_in_place_of_a_file(self, scenario: Scenario, where: str) -> None:
        scenario.git("rm", "-q", where)
        scenario.git("update-index", "--add", "--cacheinfo", f"160000,{scenario.base_sha},{where}")
        scenario.git("commit", "-q", "-m", f"a gitlink at {where}")
        head = scenario.git("rev-parse", "HEAD")
        _not_green(scenario, head)

    def test_a_check_id_three_times_with_a_deletion(self, scenario: Scenario) -> None:
        checks = "".join(f"- id: A\n  text: {TEXTS['A']} {n}\n" for n in range(3))
        head = scenario.git.commit({RUBRIC: rubric_yaml(["B", "C", "D"]) + checks}, "A three times")
        _not_green(scenario, head)


# -- rubric ids: what a consumer looks a rubric up by ------------------------------------------

class TestRubricIds:
    """Round 5 closed a second file with an existing rubric's id. A consumer that loads a rubric
    by its `id` reads whichever file now carries it."""

    def _lenient_on_main(self, scenario: Scenario) -> str:
        lenient = rubric_yaml(["B"]).replace("id: demo", "id: demo-draft")
        main = _on_main(scenario, {"rubrics/draft.yaml": lenient}, "a lenient draft with its own id")
        scenario.git("reset", "-q", "--hard", main)
        return lenient

    def test_two_rubrics_swap_their_ids(self, scenario: Scenario) -> None:
        lenient = self._lenient_on_main(scenario)
        head = scenario.git.commit({RUBRIC: rubric_yaml(["A", "B", "C", "D"]).replace("id: demo", "id: demo-draft"),
                                    "rubrics/draft.yaml": lenient.replace("id: demo-draft", "id: demo")},
                                   "swap the ids")
        _rejected(scenario, head)

    def test_the_strict_rubric_renames_its_id_and_the_draft_takes_it(self, scenario: Scenario) -> None:
        lenient = self._lenient_on_main(scenario)
        head = scenario.git.commit({RUBRIC: rubric_yaml(["A", "B", "C", "D"]).replace("id: demo", "id: demo-v1"),
                                    "rubrics/draft.yaml": lenient.replace("id: demo-draft", "id: demo")},
                                   "demo -> demo-v1; the draft is demo now")
        _rejected(scenario, head)

    def test_a_rubric_id_changed_alone(self, scenario: Scenario) -> None:
        """Not a route by itself (nothing else claims `demo`), but the consumer's lookup breaks:
        the gate should at least not call it unchanged."""
        head = scenario.git.commit({RUBRIC: rubric_yaml(["A", "B", "C", "D"]).replace("id: demo", "id: demo-v2")},
                                   "rename the id")
        result = _gate(scenario, head)
        assert "demo-v2" in result.summary, result.summary[:2000]


# -- the override, as the label's own run and its re-runs grant it -------------------------------

class TestOverrideReRuns:
    def test_a_re_run_of_the_labeled_run_after_main_moved(self, scenario: Scenario) -> None:
        """Closed by override: every run, the label's own included, refuses a base tip committed
        after the label. The writer overrides deleting A against B0. main then deletes B (overridden there): the
        merge now loses R1 and R2. A re-run of the old `labeled` run (anyone with write access,
        the PR's author among them, may re-run a workflow) replays its payload: the label's own
        run, on the same head, against a base the writer never saw."""
        head = scenario.git.commit(DELETE_A, "delete A")
        _label(scenario, "labeled")
        labeled = json.loads(scenario.event(head, labels=(OVERRIDE,)).read_text())
        assert _gate(scenario, head, labels=(OVERRIDE,)).code == 0  # the writer's override, at B0
        _on_main(scenario, {RUBRIC: rubric_yaml(["A", "C", "D"])}, "main deletes B (overridden on main)")
        rerun = scenario.run(head, payload=labeled)
        assert rerun.code == 1 and _conclusion(scenario, head) == "failure", rerun.stdout + rerun.summary

    def test_a_re_run_of_the_labeled_run_after_a_retarget(self, scenario: Scenario) -> None:
        """Closed by override: a `base_ref_changed` event after the label refuses it. Overridden into main; then retargeted to `release`, where B is gone already."""
        head = scenario.git.commit(DELETE_A, "delete A")
        _label(scenario, "labeled")
        labeled = json.loads(scenario.event(head, labels=(OVERRIDE,)).read_text())
        assert _gate(scenario, head, labels=(OVERRIDE,)).code == 0
        scenario.git("checkout", "-q", "-b", "release", scenario.base_sha)
        release = scenario.git.commit({RUBRIC: rubric_yaml(["A", "C", "D"])}, "release: without B")
        scenario.git("checkout", "-q", "pr")
        scenario.base_sha = scenario.fake.base_sha = release
        scenario.fake.label_events.append({"event": "base_ref_changed", "actor": {"login": "mallory"}})
        rerun = scenario.run(head, payload=labeled)
        assert rerun.code == 1 and _conclusion(scenario, head) == "failure", rerun.stdout + rerun.summary

    def test_a_re_run_of_the_labeled_run_after_the_label_was_re_applied_by_a_triager(self, scenario: Scenario) -> None:
        head = scenario.git.commit(DELETE_A, "delete A")
        _label(scenario, "labeled")
        labeled = json.loads(scenario.event(head, labels=(OVERRIDE,)).read_text())
        _label(scenario, "unlabeled", who="triager")
        _label(scenario, "labeled", who="triager")
        scenario.fake.permissions["triager"] = "triage"
        rerun = scenario.run(head, payload=labeled)
        assert rerun.code == 1 and _conclusion(scenario, head) == "failure", rerun.stdout + rerun.summary
