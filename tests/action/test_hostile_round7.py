"""Round 7 of the hostile pass: the pieces landed last (the restored cache set aside but the
batch journal, the journal's request binding, the base cache artifact's provenance, rubric id
changes under the override, unloadable data as exit 2). Strict xfails are routes still open."""

from __future__ import annotations

import json
import os
import unicodedata
from pathlib import Path

import pytest

from tests.action.harness import (
    CALIBRATION,
    RUBRIC,
    TEXTS,
    VERDICTS,
    Scenario,
    rubric_yaml,
    verdicts_jsonl,
)
from tests.action.test_hostile_round3 import _gate
from tests.action.test_hostile_round4 import OVERRIDE, _judged, _keyed, _label
from tests.action.test_hostile_round6 import _conclusion, _not_green, _rejected

DELETE_A = {RUBRIC: rubric_yaml(["B", "C", "D"])}
# What lets a deletion of A through: B catching R1 (the keyed "no" the judge never gave).
PLANT = _keyed("B", "R1", "no")


def _cache(scenario: Scenario, name: str = ".rubric-gate/cache") -> Path:
    path = scenario.git.path / name
    path.mkdir(parents=True, exist_ok=True)
    return path


def _with_id(rubric_id: str, checks: list[str] | None = None) -> str:
    text = rubric_yaml(checks or ["A", "B", "C", "D"])
    assert text.startswith("id: demo\n")
    return f"id: {json.dumps(rubric_id, ensure_ascii=False)}\n" + text[len("id: demo\n"):]


# -- 1. the restored cache set aside, the journal kept ------------------------------------------

class TestSetAside:
    def test_journal_name_as_a_symlink_to_planted_verdicts(self, scenario: Scenario) -> None:
        inputs = _judged(scenario)
        planted = scenario.git.path / "planted.jsonl"
        planted.write_text(PLANT)
        cache = _cache(scenario)
        (cache / "verdicts.jsonl").write_text(PLANT)
        os.symlink(planted, cache / "verdicts.jsonl.batches")
        head = scenario.git.commit(DELETE_A, "delete A")
        _rejected(scenario, head, **inputs)
        assert not (cache / "verdicts.jsonl.batches").is_symlink()
        assert planted.read_text() == PLANT  # removed as a link, not through it

    def test_journal_name_as_a_directory_holding_verdicts(self, scenario: Scenario) -> None:
        inputs = _judged(scenario)
        journal = _cache(scenario) / "verdicts.jsonl.batches"
        journal.mkdir()
        (journal / "verdicts.jsonl").write_text(PLANT)
        head = scenario.git.commit(DELETE_A, "delete A")
        _rejected(scenario, head, **inputs)

    def test_cache_dir_as_a_symlink_to_planted_cache(self, scenario: Scenario) -> None:
        inputs = _judged(scenario)
        elsewhere = scenario.git.path / "elsewhere"
        elsewhere.mkdir()
        (elsewhere / "verdicts.jsonl").write_text(PLANT)
        (scenario.git.path / ".rubric-gate").mkdir()
        os.symlink(elsewhere, scenario.git.path / ".rubric-gate" / "cache")
        head = scenario.git.commit(DELETE_A, "delete A")
        _rejected(scenario, head, **inputs)

    def test_a_custom_verdict_cache_behind_a_symlinked_parent(self, scenario: Scenario) -> None:
        inputs = _judged(scenario)
        real = scenario.git.path / "real-cache"
        (real / "sub").mkdir(parents=True)
        (real / "sub" / "verdicts.jsonl").write_text(PLANT)
        os.symlink(real, scenario.git.path / "linked")
        head = scenario.git.commit(DELETE_A, "delete A")
        _rejected(scenario, head, verdict_cache="linked/sub", **inputs)

    @pytest.mark.parametrize("name", ["verdicts.jsonl.batches ", "Verdicts.jsonl.batches",
                                      "verdicts.jsonl.batches.tmp", "verdicts.jsonl"])
    def test_look_alike_journal_names(self, scenario: Scenario, name: str) -> None:
        inputs = _judged(scenario)
        (_cache(scenario) / name).write_text(PLANT)
        head = scenario.git.commit(DELETE_A, "delete A")
        _rejected(scenario, head, **inputs)

    def test_nested_planted_cache(self, scenario: Scenario) -> None:
        inputs = _judged(scenario)
        nested = _cache(scenario) / "cache"
        nested.mkdir()
        (nested / "verdicts.jsonl").write_text(PLANT)
        head = scenario.git.commit(DELETE_A, "delete A")
        _rejected(scenario, head, verdict_cache=".rubric-gate/cache", **inputs)

    def test_a_verdict_cache_outside_output_dir(self, scenario: Scenario) -> None:
        inputs = _judged(scenario)
        (_cache(scenario, "ci-cache") / "verdicts.jsonl").write_text(PLANT)
        head = scenario.git.commit(DELETE_A, "delete A")
        _rejected(scenario, head, verdict_cache="ci-cache", **inputs)

    def test_planted_verdicts_in_output_dir_itself(self, scenario: Scenario) -> None:
        inputs = _judged(scenario)
        out = _cache(scenario, ".rubric-gate")
        (out / "verdicts.jsonl").write_text(PLANT)
        (out / "verdicts").mkdir()
        (out / "verdicts" / "verdicts.jsonl").write_text(PLANT)
        head = scenario.git.commit(DELETE_A, "delete A")
        _rejected(scenario, head, **inputs)

    def test_a_planted_journal_without_batch_mode(self, scenario: Scenario) -> None:
        """The journal kept is only read by batch mode: a planted one with verdict-like lines."""
        inputs = _judged(scenario)
        (_cache(scenario) / "verdicts.jsonl.batches").write_text(PLANT)
        head = scenario.git.commit(DELETE_A, "delete A")
        _rejected(scenario, head, **inputs)


# -- 4. rubric id changes need the override -----------------------------------------------------

class TestIdChanges:
    @pytest.mark.parametrize("new_id", ["Demo", "DEMO", "demo ", "ｄｅｍｏ"])
    def test_a_look_alike_id(self, scenario: Scenario, new_id: str) -> None:
        head = scenario.git.commit({RUBRIC: _with_id(new_id)}, "id look-alike")
        result = _gate(scenario, head)
        if result.code == 0:
            # only acceptable if the id loads as exactly the base's
            assert new_id.strip() == "demo", result.stdout
        else:
            assert result.code in (1, 2) and _conclusion(scenario, head) == "failure", result.stdout

    def test_an_nfd_id_change(self, scenario: Scenario) -> None:
        scenario.git("checkout", "-q", "main")
        base = scenario.git.commit({RUBRIC: _with_id("caf\u00e9")}, "id café (NFC)")
        scenario.git("checkout", "-q", "pr")
        scenario.git("merge", "-q", "--ff-only", "main")
        scenario.base_sha = scenario.fake.base_sha = base
        head = scenario.git.commit({RUBRIC: _with_id(unicodedata.normalize("NFD", "caf\u00e9"))}, "id café (NFD)")
        result = _gate(scenario, head)
        # NFC and NFD are one id only if the loader normalises it; either way never a crash
        assert result.code in (0, 1, 2), result.stdout + result.stderr
        if result.code == 0:
            from rubric_gate.rubric import Rubric  # noqa: F401
            assert "changed" not in result.stdout.lower() or "id" not in result.stdout

    def test_an_id_moved_with_a_rename(self, scenario: Scenario) -> None:
        scenario.git("mv", RUBRIC, "rubrics/demo2.yaml")
        head = scenario.git.commit({"rubrics/demo2.yaml": _with_id("demo2")}, "rename and re-id")
        _rejected(scenario, head)

    def test_delete_and_re_add_under_another_path_and_id(self, scenario: Scenario) -> None:
        head = scenario.git.commit({RUBRIC: None, "rubrics/fresh.yaml": _with_id("fresh")}, "re-add as fresh")
        _rejected(scenario, head)

    def test_an_id_change_with_the_override_passes(self, scenario: Scenario) -> None:
        head = scenario.git.commit({RUBRIC: _with_id("demo-v2")}, "re-id")
        _label(scenario, "labeled")
        assert _gate(scenario, head, labels=(OVERRIDE,)).code == 0

    def test_an_id_change_without_the_override_fails(self, scenario: Scenario) -> None:
        head = scenario.git.commit({RUBRIC: _with_id("demo-v2")}, "re-id")
        _rejected(scenario, head)


# -- 5. unloadable data is exit 2 with a failed check -------------------------------------------

BROKEN = "{not json\n"


class TestUnloadable:
    def test_a_broken_calibration_with_the_override(self, scenario: Scenario) -> None:
        head = scenario.git.commit({CALIBRATION: BROKEN}, "break calibration")
        _label(scenario, "labeled")
        _rejected(scenario, head, code=2, labels=(OVERRIDE,))

    def test_a_broken_verdict_file_with_the_override(self, scenario: Scenario) -> None:
        head = scenario.git.commit({VERDICTS: BROKEN}, "break verdicts")
        _label(scenario, "labeled")
        _rejected(scenario, head, code=2, labels=(OVERRIDE,))

    def test_a_broken_verdict_file_and_a_deletion_with_the_override(self, scenario: Scenario) -> None:
        head = scenario.git.commit({VERDICTS: BROKEN, **DELETE_A}, "break verdicts; delete A")
        _label(scenario, "labeled")
        _rejected(scenario, head, code=2, labels=(OVERRIDE,))

    def test_a_verdict_file_main_broke_and_a_deletion(self, scenario: Scenario) -> None:
        scenario.git("checkout", "-q", "main")
        base = scenario.git.commit({VERDICTS: BROKEN}, "main breaks the verdicts")
        scenario.git("checkout", "-q", "pr")
        scenario.git("merge", "-q", "--ff-only", "main")
        scenario.base_sha = scenario.fake.base_sha = base
        head = scenario.git.commit(DELETE_A, "delete A")
        _not_green(scenario, head)

    def test_a_calibration_main_broke_and_a_deletion(self, scenario: Scenario) -> None:
        scenario.git("checkout", "-q", "main")
        base = scenario.git.commit({CALIBRATION: BROKEN}, "main breaks the calibration")
        scenario.git("checkout", "-q", "pr")
        scenario.git("merge", "-q", "--ff-only", "main")
        scenario.base_sha = scenario.fake.base_sha = base
        head = scenario.git.commit(DELETE_A, "delete A")
        _not_green(scenario, head)

    def test_a_broken_file_no_rubric_names_beside_a_deletion(self, scenario: Scenario) -> None:
        head = scenario.git.commit({"calibration/orphan.jsonl": BROKEN, **DELETE_A}, "orphan; delete A")
        _not_green(scenario, head)

    def test_repointing_to_a_broken_file_with_the_override(self, scenario: Scenario) -> None:
        text = rubric_yaml(["A", "B", "C", "D"]).replace(VERDICTS, "calibration/other.verdicts.jsonl")
        head = scenario.git.commit({RUBRIC: text, "calibration/other.verdicts.jsonl": BROKEN}, "repoint")
        _label(scenario, "labeled")
        _not_green(scenario, head, labels=(OVERRIDE,))

    def test_a_verdict_file_broken_only_for_a_deleted_check(self, scenario: Scenario) -> None:
        record = verdicts_jsonl(TEXTS) + '{"item": "R1", "check_text": "' + TEXTS["A"] + '"}\n'
        head = scenario.git.commit({VERDICTS: record, **DELETE_A}, "bad line; delete A")
        _not_green(scenario, head)
