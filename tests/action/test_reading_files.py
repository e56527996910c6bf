"""What the gate reads: one parse of each file as committed; malformed, oversized or strange input is
bad input (exit 2, naming the file and line), never a crash and never covered by the override.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
import yaml

from tests.action.harness import (
    CALIBRATION,
    DELETE_A,
    FAILS,
    LABELS,
    OVERRIDE,
    ROOT,
    RUBRIC,
    TASK,
    TEXTS,
    VERDICTS,
    Scenario,
    apply_label,
    calibration_jsonl,
    commit_on_main,
    conclusion_of,
    label_by_writer,
    not_green,
    rejected_run,
    rubric_yaml,
    run_gated,
    verdict_line,
    verdicts_jsonl,
)


def test_files_the_pr_did_not_touch_are_read_once_per_commit(scenario: Scenario) -> None:
    """Many rubrics are cheap: a file at a commit is read from git once, however many steps ask."""
    calls: list[list[str]] = []
    real_run = subprocess.run

    def counting_run(args, *a, **k):
        if isinstance(args, list) and args[:1] == ["git"]:
            calls.append(args)
        return real_run(args, *a, **k)

    head = scenario.git.commit({RUBRIC: rubric_yaml(["A", "B", "C", "D", "A2"])}, "add A2")
    from unittest import mock
    with mock.patch("subprocess.run", counting_run):
        result = scenario.run(head)
    assert result.code == 0
    reads = [tuple(c) for c in calls if c[1:3] in (["cat-file", "-e"], ["cat-file", "blob"]) and ":" in c[3]]
    assert len(reads) == len(set(reads)), sorted(reads)


@pytest.mark.parametrize("value", ["1.0", "true", "'1'", "-1", "0x1"], ids=["float", "bool", "string", "negative", "hex"])
def test_a_max_failures_that_is_not_a_plain_integer_is_bad_input(scenario: Scenario, value: str) -> None:
    head = scenario.git.commit({RUBRIC: rubric_yaml(["A", "B", "C", "D"]) + f"aggregation:\n  max_failures: {value}\n"},
                               "odd max_failures")
    assert run_gated(scenario, head).code != 0


@pytest.mark.parametrize("line", [
    '{"item": "R1", "check_text": "%s", "answer": "No"}\n',
    '{"item": "R1", "check_text": "%s", "answer": "no", "answer": "yes"}\n',
    '{"item": "R1", "check_text": "%s", "answer": "no", "sample": "0"}\n',
    '{"item": "R1", "check_text": "%s", "answer": "no", "sample": true}\n',
    '{"item": "R1", "check_text": "%s", "answer": "no", "Answer": "yes"}\n',
], ids=["capitalised", "duplicate-key", "string-sample", "bool-sample", "extra-key"])
def test_a_malformed_verdict_line_is_bad_input(scenario: Scenario, line: str) -> None:
    head = scenario.git.commit({RUBRIC: rubric_yaml(["B", "C", "D"]),
                                VERDICTS: verdicts_jsonl(TEXTS) + line % TEXTS["B"]}, "delete A")
    assert run_gated(scenario, head).code != 0


def test_an_item_written_twice_with_opposite_labels_is_bad_input(scenario: Scenario) -> None:
    from tests.action.harness import CALIBRATION, calibration_jsonl

    dup = json.dumps({"id": "R1b", "input": "design R1", "output": "review R1", "label": "pass"}) + "\n"
    head = scenario.git.commit({CALIBRATION: calibration_jsonl() + dup}, "R1 again, as pass")
    assert run_gated(scenario, head).code != 0


def test_a_duplicate_label_key_is_bad_input(scenario: Scenario) -> None:
    from tests.action.harness import CALIBRATION, calibration_jsonl

    cal = calibration_jsonl().replace('"label": "fail"}', '"label": "fail", "label": "pass"}', 1)
    head = scenario.git.commit({CALIBRATION: cal}, "R1 labeled twice")
    assert run_gated(scenario, head).code != 0


# -- files that are not what they say -------------------------------------------------------------

LFS_POINTER = ("version https://git-lfs.github.com/spec/v1\n"
               "oid sha256:4d7a214614ab2935c943f9e0ff69d22eadbb8f32b1258daaa5e2ca24d17e2393\nsize 12345\n")


@pytest.mark.parametrize("path", [RUBRIC, VERDICTS, "calibration/demo.jsonl"])
def test_a_file_committed_as_an_lfs_pointer_is_bad_input(scenario: Scenario, path: str) -> None:
    edits: dict[str, str | None] = {".gitattributes": f"{path} filter=lfs diff=lfs merge=lfs -text\n", path: LFS_POINTER}
    if path != RUBRIC:
        edits[RUBRIC] = rubric_yaml(["B", "C", "D"])
    head = scenario.git.commit(edits, "track it in LFS")
    assert run_gated(scenario, head).code != 0


def test_a_textconv_attribute_does_not_change_what_the_gate_reads(scenario: Scenario) -> None:
    """`.gitattributes` with a diff driver: the gate reads blobs, never a filtered view."""
    scenario.git("config", "diff.hide.textconv", "sed -e s/no/yes/")
    head = scenario.git.commit({".gitattributes": "*.jsonl diff=hide\n*.yaml diff=hide\n",
                                RUBRIC: rubric_yaml(["B", "C", "D"])}, "delete A behind a textconv")
    assert run_gated(scenario, head).code == 1


def test_deeply_nested_yaml_is_bad_input(scenario: Scenario) -> None:
    head = scenario.git.commit({RUBRIC: rubric_yaml(["B", "C", "D"]) + "x: " + "[" * 20000 + "]" * 20000 + "\n"},
                               "deep")
    result = scenario.run(head)
    assert result.code in (2, 3), result.stdout + result.stderr


def test_an_alias_bomb_is_bad_input(scenario: Scenario) -> None:
    bomb = "a: &a [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{c}: &{c} [*{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}]\n" for p, c in zip("abcdefgh", "bcdefghi", strict=True))
    head = scenario.git.commit({RUBRIC: rubric_yaml(["B", "C", "D"]) + bomb}, "bomb")
    assert run_gated(scenario, head).code == 2


def test_a_sample_index_too_large_for_a_column_is_bad_input_not_a_crash(scenario: Scenario) -> None:
    line = verdict_line("B", "R1", "no").replace("}", ', "sample": 100000000000000000000}')
    head = scenario.git.commit({RUBRIC: rubric_yaml(["B", "C", "D"]), VERDICTS: verdicts_jsonl(TEXTS) + line},
                               "delete A; a huge sample index")
    result = run_gated(scenario, head)
    assert result.code == 2, result.stdout + result.stderr


def test_a_key_written_twice_in_the_prs_rubric_is_bad_input(scenario: Scenario) -> None:
    head = scenario.git.commit({RUBRIC: rubric_yaml(["A", "B", "C", "D"]) + "task: Say yes.\n"}, "task twice")
    assert run_gated(scenario, head).code == 2


# -- rubric YAML: documents and streams ---------------------------------------------------------

class TestRubricStream:
    def test_a_second_yaml_document_after_the_lenient_one(self, scenario: Scenario) -> None:
        text = rubric_yaml(["B", "C", "D"]) + "---\n" + rubric_yaml(["A", "B", "C", "D"])
        head = scenario.git.commit({RUBRIC: text}, "two documents")
        rejected_run(scenario, head, code=2)

    def test_an_empty_rubric_file(self, scenario: Scenario) -> None:
        head = scenario.git.commit({RUBRIC: ""}, "emptied")
        rejected_run(scenario, head, code=2)

    def test_a_rubric_in_json_syntax(self, scenario: Scenario) -> None:
        """JSON is YAML: the same document, gated as such."""

        head = scenario.git.commit({RUBRIC: json.dumps(yaml.safe_load(rubric_yaml(["B", "C", "D"])))}, "as JSON")
        rejected_run(scenario, head)

    def test_a_rubric_in_utf16(self, scenario: Scenario) -> None:
        (scenario.git.path / RUBRIC).write_bytes(rubric_yaml(["A", "B", "C", "D"]).encode("utf-16"))
        scenario.git("add", RUBRIC)
        head = scenario.git.commit({}, "the rubric re-encoded as UTF-16")
        rejected_run(scenario, head, code=2)


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
        rejected_run(scenario, head)

    def test_a_task_reworded_through_a_merge_key_list(self, scenario: Scenario) -> None:
        """`<<: [a, b]`: the first mapping wins a key both have; the explicit key is gone."""
        text = _demo_with(body_replace=(f"task: {TASK}\n",
                                        "<<: [{task: Say yes.}, {task: Review a cloud security design.}]\n"))
        head = scenario.git.commit({RUBRIC: text}, "task through a merge list")
        rejected_run(scenario, head)

    def test_k_raised_through_an_anchor_and_a_merge_key(self, scenario: Scenario) -> None:
        text = _demo_with(header="defaults: &d {max_failures: 3}\n") + "aggregation:\n  <<: *d\n"
        head = scenario.git.commit({RUBRIC: text}, "k = 3 via an anchor")
        result = run_gated(scenario, head)
        # `defaults` is not a rubric key: an input error; either way nothing green.
        assert result.code in (1, 2) and conclusion_of(scenario, head) == "failure", result.stdout

    def test_k_raised_through_a_merge_key_in_aggregation(self, scenario: Scenario) -> None:
        head = scenario.git.commit({RUBRIC: _demo_with() + "aggregation:\n  <<: {max_failures: 3}\n"}, "k = 3 via <<")
        rejected_run(scenario, head)

    def test_a_duplicate_key_inside_a_merged_mapping(self, scenario: Scenario) -> None:
        text = _demo_with(body_replace=(f"task: {TASK}\n", f"<<: {{task: {TASK}, task: Say yes.}}\n"))
        head = scenario.git.commit({RUBRIC: text}, "a key twice inside <<")
        result = run_gated(scenario, head)
        assert result.code in (1, 2) and conclusion_of(scenario, head) == "failure", result.stdout

    def test_a_bom_before_the_rubric_with_a_deletion(self, scenario: Scenario) -> None:
        head = scenario.git.commit({RUBRIC: "\ufeff" + rubric_yaml(["B", "C", "D"])}, "BOM; delete A")
        not_green(scenario, head)

    def test_crlf_rubric_with_a_deletion(self, scenario: Scenario) -> None:
        head = scenario.git.commit({RUBRIC: rubric_yaml(["B", "C", "D"]).replace("\n", "\r\n")}, "CRLF; delete A")
        rejected_run(scenario, head)

    def test_tab_indentation(self, scenario: Scenario) -> None:
        text = rubric_yaml(["B", "C", "D"]).replace("  text:", "\ttext:")
        head = scenario.git.commit({RUBRIC: text}, "tabs; delete A")
        rejected_run(scenario, head, code=2)

    def test_a_nul_inside_a_check_text(self, scenario: Scenario) -> None:
        text = rubric_yaml(["A", "B", "C", "D"]).replace("Are IAM", "Are\x00 IAM")
        head = scenario.git.commit({RUBRIC: text}, "a NUL")
        rejected_run(scenario, head, code=2)

    def test_a_line_separator_inside_a_frozen_checks_text(self, scenario: Scenario) -> None:
        """U+2028 is a line break to YAML 1.1 (a plain scalar that breaks there does not parse) and
        whitespace to the text's normalisation; with A deleted too, nothing is green."""
        text = rubric_yaml(["B", "C", "D"]).replace("Are IAM roles scoped", "Are IAM roles\u2028scoped")
        head = scenario.git.commit({RUBRIC: text}, "U+2028 in B; delete A")
        not_green(scenario, head)

    def test_many_aliases_of_a_large_anchor(self, scenario: Scenario) -> None:
        """Not a nested bomb: a 64 KB text aliased as the text of 2,000 checks."""
        big = "Does it " + "x" * 65536 + "?"
        checks = "".join(f"- id: Z{i}\n  text: *big\n" for i in range(2000))
        text = rubric_yaml(["A", "B", "C", "D"]).replace(f"  text: {TEXTS['D']}\n",
                                                           f"  text: {TEXTS['D']}\n- id: Y\n  text: &big {big}\n")
        head = scenario.git.commit({RUBRIC: text + checks}, "a large anchor, aliased")
        result = run_gated(scenario, head)
        assert result.code in (1, 2) and conclusion_of(scenario, head) == "failure", result.stdout[-2000:]

    def test_an_explicit_merge_tag(self, scenario: Scenario) -> None:
        text = _demo_with(body_replace=(f"calibration: {CALIBRATION}\n", f"!!merge <<: {{calibration: {LENIENT_CAL}}}\n"))
        head = scenario.git.commit({RUBRIC: text, LENIENT_CAL: calibration_jsonl({**LABELS, "R1": "pass"})},
                                   "an explicit !!merge")
        result = run_gated(scenario, head)
        assert result.code in (1, 2) and conclusion_of(scenario, head) == "failure", result.stdout


# -- numbers YAML and JSON can spell: NaN, infinities, huge integers ---------------------------

class TestNumericEdges:
    @pytest.mark.parametrize("k", ["99999999999999999999999", "0x7fffffffffffffffff", ".inf", ".nan", "-0", "0o3"],
                             ids=["huge", "huge-hex", "inf", "nan", "minus-zero", "octal"])
    def test_max_failures_spellings(self, scenario: Scenario, k: str) -> None:
        head = scenario.git.commit({RUBRIC: rubric_yaml(["A", "B", "C", "D"]) + f"aggregation:\n  max_failures: {k}\n"},
                                   f"k = {k}")
        result = run_gated(scenario, head)
        if k == "-0":  # 0: all-pass spelled out, no change the gate rejects
            assert result.code == 0, result.stdout
            return
        assert result.code in (1, 2) and conclusion_of(scenario, head) == "failure", result.stdout + result.stderr

    @pytest.mark.parametrize("version", [".nan", ".inf", "1e999", "99999999999999999999999"])
    def test_a_version_spelling_with_a_deletion(self, scenario: Scenario, version: str) -> None:
        text = rubric_yaml(["B", "C", "D"]).replace("version: 1", f"version: {version}")
        head = scenario.git.commit({RUBRIC: text}, f"version {version}; delete A")
        rejected_run(scenario, head)

    @pytest.mark.parametrize("sample", ["1e400", "NaN", "Infinity", "1.0", "-1"])
    def test_a_verdict_sample_spelling(self, scenario: Scenario, sample: str) -> None:
        line = verdict_line("B", "R1", "no").replace("}", f', "sample": {sample}}}')
        head = scenario.git.commit({VERDICTS: verdicts_jsonl(TEXTS) + line, **DELETE_A}, f"sample {sample}")
        not_green(scenario, head)

    def test_an_item_whose_input_is_nan(self, scenario: Scenario) -> None:
        """main labels R6 (`input` NaN, which Python's JSON reads), caught by A alone; the PR deletes A."""
        labels = {**LABELS, "R6": "fail"}
        cal = calibration_jsonl(LABELS) + '{"id": "R6", "input": NaN, "output": "review R6", "label": "fail"}\n'
        verdicts = verdicts_jsonl(TEXTS, {**FAILS, "R6": {"A"}}, labels)
        main = commit_on_main(scenario, {CALIBRATION: cal, VERDICTS: verdicts}, "R6 with a NaN input")
        scenario.git("reset", "-q", "--hard", main)
        head = scenario.git.commit(DELETE_A, "delete A")
        not_green(scenario, head)


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
        not_green(scenario, head)

    @pytest.mark.parametrize("line", [
        '{"id": "R6", "input": ' + _nested(5000) + ', "output": "o", "label": "fail"}',
        '{"id": "R6", "input": "i", "output": "o", "label": "fail", "meta": ' + '{"a":' * 3000 + "1" + "}" * 3000 + "}",
        '{"id": "R6", "input": "i", "output": "o", "label": "fail", "split": null}',
        '{"id": "", "input": "i", "output": "o", "label": "fail"}',
        '{"id": "R6", "input": "i", "output": "o", "label": "fail", "flaw": "' + "x" * 100 + '"}',
    ], ids=["deep-input", "deep-meta", "null-split", "empty-id", "odd-flaw"])
    def test_a_strange_added_item_with_a_deletion(self, scenario: Scenario, line: str) -> None:
        head = scenario.git.commit({CALIBRATION: calibration_jsonl() + line + "\n", **DELETE_A}, "a strange item")
        not_green(scenario, head)

    @pytest.mark.parametrize("where", [RUBRIC, CALIBRATION, VERDICTS])
    def test_a_submodule_in_place_of_a_file(self, scenario: Scenario, where: str) -> None:
        scenario.git("rm", "-q", where)
        scenario.git("update-index", "--add", "--cacheinfo", f"160000,{scenario.base_sha},{where}")
        scenario.git("commit", "-q", "-m", f"a gitlink at {where}")
        head = scenario.git("rev-parse", "HEAD")
        not_green(scenario, head)

    def test_a_check_id_three_times_with_a_deletion(self, scenario: Scenario) -> None:
        checks = "".join(f"- id: A\n  text: {TEXTS['A']} {n}\n" for n in range(3))
        head = scenario.git.commit({RUBRIC: rubric_yaml(["B", "C", "D"]) + checks}, "A three times")
        not_green(scenario, head)


# -- 5. unloadable data is exit 2 with a failed check -------------------------------------------

BROKEN = "{not json\n"


class TestUnloadable:
    def test_a_broken_calibration_with_the_override(self, scenario: Scenario) -> None:
        head = scenario.git.commit({CALIBRATION: BROKEN}, "break calibration")
        apply_label(scenario, "labeled")
        rejected_run(scenario, head, code=2, labels=(OVERRIDE,))

    def test_a_broken_verdict_file_with_the_override(self, scenario: Scenario) -> None:
        head = scenario.git.commit({VERDICTS: BROKEN}, "break verdicts")
        apply_label(scenario, "labeled")
        rejected_run(scenario, head, code=2, labels=(OVERRIDE,))

    def test_a_broken_verdict_file_and_a_deletion_with_the_override(self, scenario: Scenario) -> None:
        head = scenario.git.commit({VERDICTS: BROKEN, **DELETE_A}, "break verdicts; delete A")
        apply_label(scenario, "labeled")
        rejected_run(scenario, head, code=2, labels=(OVERRIDE,))

    def test_a_verdict_file_main_broke_and_a_deletion(self, scenario: Scenario) -> None:
        scenario.git("checkout", "-q", "main")
        base = scenario.git.commit({VERDICTS: BROKEN}, "main breaks the verdicts")
        scenario.git("checkout", "-q", "pr")
        scenario.git("merge", "-q", "--ff-only", "main")
        scenario.base_sha = scenario.fake.base_sha = base
        head = scenario.git.commit(DELETE_A, "delete A")
        not_green(scenario, head)

    def test_a_calibration_main_broke_and_a_deletion(self, scenario: Scenario) -> None:
        scenario.git("checkout", "-q", "main")
        base = scenario.git.commit({CALIBRATION: BROKEN}, "main breaks the calibration")
        scenario.git("checkout", "-q", "pr")
        scenario.git("merge", "-q", "--ff-only", "main")
        scenario.base_sha = scenario.fake.base_sha = base
        head = scenario.git.commit(DELETE_A, "delete A")
        not_green(scenario, head)

    def test_a_broken_file_no_rubric_names_beside_a_deletion(self, scenario: Scenario) -> None:
        head = scenario.git.commit({"calibration/orphan.jsonl": BROKEN, **DELETE_A}, "orphan; delete A")
        not_green(scenario, head)

    def test_repointing_to_a_broken_file_with_the_override(self, scenario: Scenario) -> None:
        text = rubric_yaml(["A", "B", "C", "D"]).replace(VERDICTS, "calibration/other.verdicts.jsonl")
        head = scenario.git.commit({RUBRIC: text, "calibration/other.verdicts.jsonl": BROKEN}, "repoint")
        apply_label(scenario, "labeled")
        not_green(scenario, head, labels=(OVERRIDE,))

    def test_a_verdict_file_broken_only_for_a_deleted_check(self, scenario: Scenario) -> None:
        record = verdicts_jsonl(TEXTS) + '{"item": "R1", "check_text": "' + TEXTS["A"] + '"}\n'
        head = scenario.git.commit({VERDICTS: record, **DELETE_A}, "bad line; delete A")
        not_green(scenario, head)


def _commit_link(scenario: Scenario, name: str, target: str) -> str:
    path = scenario.git.path / name
    path.unlink()
    os.symlink(target, path)
    scenario.git("add", "--", name)
    scenario.git("commit", "-q", "-m", f"{name} -> {target}")
    return scenario.git("rev-parse", "HEAD")


class TestUnloadableShapes:
    @pytest.mark.parametrize("name", [CALIBRATION, VERDICTS])
    @pytest.mark.parametrize("target", ["missing.jsonl", "/etc/hostname", "../../../../etc/hostname"])
    def test_a_data_file_made_a_symlink(self, scenario: Scenario, name: str, target: str) -> None:
        head = _commit_link(scenario, name, target)
        apply_label(scenario, "labeled")
        not_green(scenario, head, labels=(OVERRIDE,))

    @pytest.mark.parametrize("name", [CALIBRATION, VERDICTS])
    def test_a_data_file_made_a_directory(self, scenario: Scenario, name: str) -> None:
        scenario.git("rm", "-q", "--", name)
        head = scenario.git.commit({f"{name}/x": "{}\n"}, "a directory now")
        # Read as the file's deletion (which the override may pass, as it passes a plain deletion).
        not_green(scenario, head)

    @pytest.mark.parametrize("name", [CALIBRATION, VERDICTS])
    def test_a_data_file_with_invalid_utf8(self, scenario: Scenario, name: str) -> None:
        path = scenario.git.path / name
        path.write_bytes(path.read_bytes() + b'{"id": "\xff\xfe"}\n')
        scenario.git("add", "--", name)
        scenario.git("commit", "-q", "-m", "bad bytes")
        head = scenario.git("rev-parse", "HEAD")
        apply_label(scenario, "labeled")
        not_green(scenario, head, labels=(OVERRIDE,))

    def test_a_verdict_cache_input_at_dot_git(self, scenario: Scenario) -> None:
        """A misconfigured `verdict_cache: .git` must be refused, not have the run empty the repository."""
        head = scenario.git.commit(DELETE_A, "delete A")
        result = run_gated(scenario, head, verdict_cache=".git")
        assert result.code in (1, 2), result.stdout + result.stderr
        assert (scenario.git.path / ".git" / "HEAD").exists()


# -- a torn tail in the audit store ---------------------------------------------------------------

def test_a_torn_last_line_in_the_audit_store_does_not_turn_later_runs_red(tmp_path: Path, monkeypatch,
                                                                         capsys) -> None:
    """A save cut short leaves half a line at the end of the audits: the next append cuts it rather
    than ending it with a newline (a bad line mid-file would fail every later run's load). Through
    `rubric-gate check --audit` (the action's PR runs keep their audits in memory: a restored audit
    cache is not read there, see `TestPlantedCache` in test_cache_trust.py)."""
    from rubric_gate.audit import AuditStore
    from tests.audit.conftest import write_items, write_rubric
    from tests.audit.test_check_audit import BASE, ITEMS, JUDGE
    from tests.fakes.audit_llm import FakeAuditLLM
    from tests.fakes.llm import serve_to_sdks
    from tests.support.cli import run_cli

    served = serve_to_sdks(FakeAuditLLM(), monkeypatch)
    next(served)
    try:
        monkeypatch.chdir(tmp_path)
        write_rubric(tmp_path / "base.yaml", BASE)
        write_items(tmp_path / "cal.jsonl", ITEMS)

        def check(*added: tuple[str, str]) -> tuple[int, str]:
            write_rubric(tmp_path / "rubric.yaml", [*BASE, *added])
            code, _, err = run_cli(capsys, "check", "--base", "base.yaml", "--head", "rubric.yaml", "--root", ".",
                                   "--judge", JUDGE, "--audit", "--format", "json")
            return code, err

        code, err = check(("plum", "The output mentions plum"))
        assert code in (0, 1), err
        audits = tmp_path / "verdicts.audits.jsonl"
        whole = audits.read_text()
        assert whole.count("\n") >= 2, whole
        audits.write_text(whole + whole.splitlines()[0][:40])  # a save cut short mid-line
        for added in (("kiwi", "The output mentions kiwi"), ("fig", "The output mentions fig")):
            code, err = check(("plum", "The output mentions plum"), added)
            assert code in (0, 1) and "Traceback" not in err, err
            assert "did not load" not in err and "malformed" not in err, err
        assert len(AuditStore.load(audits)) > whole.count("\n")  # every whole line kept, later audits added
    finally:
        next(served, None)


# -- one reader: no second YAML parser of what a PR touches ----------------------------------------

YAML_READERS = {"load", "safe_load", "full_load", "unsafe_load", "load_all", "safe_load_all", "full_load_all",
                "unsafe_load_all", "compose", "compose_all", "parse", "scan"}

# The one reader of rubrics, calibration sets and verdict files, and `preview`'s reading of the
# repository's own workflow files (not data a rubric is gated on).
YAML_READING_MODULES = {"src/rubric_gate/sources/yaml_lines.py", "src/rubric_gate/preview/workflow.py"}


def _yaml_reads() -> dict[str, list[int]]:
    """Each module of the package that calls a PyYAML reader (or imports one by name), with the lines."""
    import ast

    found: dict[str, list[int]] = {}
    for path in sorted((ROOT / "src" / "rubric_gate").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        lines = [n.lineno for n in ast.walk(tree)
                 if (isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in YAML_READERS
                     and isinstance(n.func.value, ast.Name) and n.func.value.id == "yaml")
                 or (isinstance(n, ast.ImportFrom) and n.module == "yaml"
                     and any(a.name in YAML_READERS for a in n.names))]
        if lines:
            found[str(path.relative_to(ROOT))] = lines
    return found


def test_no_module_but_the_one_reader_parses_yaml() -> None:
    """Design item 1: one YAML parser for keys, values and line numbers (the repair suggestions'
    spans too: they compose through the one reader)."""
    extra = set(_yaml_reads()) - YAML_READING_MODULES
    assert not extra, {m: _yaml_reads()[m] for m in extra}


def test_the_yaml_probe_sees_a_reader() -> None:
    assert "src/rubric_gate/sources/yaml_lines.py" in _yaml_reads()


def test_the_repair_suggestions_read_check_lines_through_the_one_reader() -> None:
    assert "src/rubric_gate/repair/yaml_spans.py" not in _yaml_reads()


@pytest.mark.parametrize("name", [CALIBRATION, VERDICTS])
def test_a_malformed_calibration_set_or_verdict_file_is_bad_input_the_override_does_not_cover(
        scenario: Scenario, name: str) -> None:
    label_by_writer(scenario)
    text = (scenario.git.path / name).read_text()
    head = scenario.git.commit({name: text + "{not json\n"}, f"break {name}")
    result = scenario.run(head, labels=(OVERRIDE,))
    assert result.code == 2 and result.outputs.get("decision", "fail") == "fail", result.stdout + result.stderr
