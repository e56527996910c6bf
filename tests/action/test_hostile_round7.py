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
    @pytest.mark.parametrize("new_id", ["Demo", "DEMO", "demo ", "\uff44\uff45\uff4d\uff4f"])
    def test_a_look_alike_id(self, scenario: Scenario, new_id: str) -> None:
        head = scenario.git.commit({RUBRIC: _with_id(new_id)}, "id look-alike")
        _rejected(scenario, head)

    def test_an_nfd_id_change(self, scenario: Scenario) -> None:
        scenario.git("checkout", "-q", "main")
        base = scenario.git.commit({RUBRIC: _with_id("caf\u00e9")}, "id café (NFC)")
        scenario.git("checkout", "-q", "pr")
        scenario.git("merge", "-q", "--ff-only", "main")
        scenario.base_sha = scenario.fake.base_sha = base
        head = scenario.git.commit({RUBRIC: _with_id(unicodedata.normalize("NFD", "caf\u00e9"))}, "id café (NFD)")
        _rejected(scenario, head)  # consumers look ids up by their bytes

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


# -- 2. the batch journal a PR's cache scope restores -------------------------------------------

EXTRA = {"X": "Is key rotation automated?"}


def _pending_then(scenario: Scenario, mutate, fake_errors: bool = False) -> None:
    """A batch run goes pending with X added (X answers no on R1, the keyword judge); the journal
    restored for the next run is `mutate(lines)`d; the next commit drops X and deletes A."""
    from tests.action.test_hostile_round6 import _keyword_labels
    from tests.fakes.batches import FakeBatches

    _keyword_labels(scenario)
    batches = FakeBatches().start()
    try:
        env = {"OPENAI_BASE_URL": batches.openai_url, "OPENAI_API_KEY": "sk-test",
               "RUBRIC_GATE_BATCH_POLL_SECONDS": "0.05"}
        inputs = {"judge": "openai:fake-model", "batch": "true", "env_extra": env}
        first = scenario.git.commit({RUBRIC: rubric_yaml(["A", "B", "C", "D", "X"], extra=EXTRA)}, "add X")
        batches.hold = True
        assert _gate(scenario, first, batch_wait="0", **inputs).outputs["decision"] == "pending"
        journal = scenario.git.path / ".rubric-gate" / "cache" / "verdicts.jsonl.batches"
        lines = journal.read_text().splitlines()
        journal.write_text("".join(line + "\n" for line in mutate(lines)))
        batches.hold = False
        second = scenario.git.commit(DELETE_A, "drop X; delete A")
        if fake_errors:  # the fake provider's handler raises on an id it does not hold (stderr)
            result = scenario.run(second, batch_wait="1", **inputs)
            assert result.code in (1, 2) and "internal error" not in result.stdout, result.stdout
            assert _conclusion(scenario, second) == "failure", result.stdout
        else:
            _rejected(scenario, second, batch_wait="1", **inputs)
    finally:
        batches.stop()


def _requests(lines: list[str]) -> list[dict]:
    return [r for r in map(json.loads, lines) if r.get("event") == "request"]


def _find(lines: list[str], text: str, item: str = "R1") -> dict:
    for record in _requests(lines):
        if any(p[0] == item and p[3] == text for p in record["pairs"]):
            return record
    raise AssertionError(lines[:3])


def _swap_custom_ids(lines: list[str]) -> list[str]:
    records = [json.loads(line) for line in lines]
    b = next(r for r in records if r.get("event") == "request" and any(
        p[0] == "R1" and p[3] == TEXTS["B"] for p in r["pairs"]))
    x = next(r for r in records if r.get("event") == "request" and any(
        p[0] == "R1" and p[3] == EXTRA["X"] for p in r["pairs"]))
    if b is x:  # one request holds both: swap the pairs inside it
        bi = next(i for i, p in enumerate(b["pairs"]) if p[0] == "R1" and p[3] == TEXTS["B"])
        xi = next(i for i, p in enumerate(b["pairs"]) if p[0] == "R1" and p[3] == EXTRA["X"])
        b["pairs"][bi], b["pairs"][xi] = b["pairs"][xi], b["pairs"][bi]
    else:
        b["custom_id"], x["custom_id"] = x["custom_id"], b["custom_id"]
    return [json.dumps(r) for r in records]


def _strip_digests(lines: list[str]) -> list[str]:
    out = []
    for record in map(json.loads, _swap_custom_ids(lines)):
        if record.get("event") == "request":
            record["custom_id"] = record["custom_id"].rsplit("-", 1)[0]
        out.append(json.dumps(record))
    return out


def _duplicate_swapped(lines: list[str]) -> list[str]:
    return lines + [line for line in _swap_custom_ids(lines) if json.loads(line).get("event") == "request"]


def _relabel_x_as_b(lines: list[str]) -> list[str]:
    """X's pair keeps X's key fields but names check B's id and text (the stored key is B's)."""
    records = [json.loads(line) for line in lines]
    for r in records:
        if r.get("event") == "request":
            for p in r["pairs"]:
                if p[3] == EXTRA["X"]:
                    p[2], p[3] = "B", TEXTS["B"]
    return [json.dumps(r) for r in records]


def _second_batch_reusing_ids(lines: list[str]) -> list[str]:
    """A second journaled batch (another local) naming the same provider batch, with swapped pairs."""
    records = [json.loads(line) for line in _swap_custom_ids(lines)]
    out = list(lines)
    for r in records:
        if r.get("local"):
            r["local"] = "rg000000000000"
        out.append(json.dumps(r))
    return out


def _drop_closed(lines: list[str]) -> list[str]:
    return [line for line in lines if json.loads(line).get("event") != "closed"]


@pytest.mark.parametrize("mutate", [
    pytest.param(lambda lines: lines, id="control"),
    pytest.param(_swap_custom_ids, id="swap-custom-ids"),
    pytest.param(_strip_digests, id="ids-without-digest"),
    pytest.param(_duplicate_swapped, id="duplicate-request-lines"),
    pytest.param(_relabel_x_as_b, id="relabel-pair"),
    pytest.param(_second_batch_reusing_ids, id="second-batch-same-ids"),
    pytest.param(_drop_closed, id="drop-closed"),
])
def test_a_planted_batch_journal(scenario: Scenario, mutate) -> None:
    _pending_then(scenario, mutate)


GARBAGE = [
    "{not json",
    "[]",
    "null",
    '"string"',
    '{"event": "request"}',
    '{"event": "request", "local": 5, "custom_id": null, "pairs": 7}',
    '{"event": "submitted"}',
    '{"event": "open", "local": null}',
    '{"event": "closed", "local": "x", "batch_id": {"a": 1}}',
]


@pytest.mark.parametrize("line", GARBAGE)
def test_a_garbage_journal_line_is_not_a_crash(scenario: Scenario, line: str) -> None:
    def mutate(lines: list[str]) -> list[str]:
        return [*lines, line]
    _pending_then(scenario, mutate)


@pytest.mark.parametrize("how", ["pairs-not-lists", "short-pairs", "int-fields", "local-request-of-garbage"])
def test_a_malformed_request_line_of_the_open_batch(scenario: Scenario, how: str) -> None:
    def mutate(lines: list[str]) -> list[str]:
        records = [json.loads(line) for line in lines]
        req = next(r for r in records if r.get("event") == "request")
        if how == "pairs-not-lists":
            req["pairs"] = ["R1", "R2"]
        elif how == "short-pairs":
            req["pairs"] = [p[:2] for p in req["pairs"]]
        elif how == "int-fields":
            req["pairs"] = [[1, 2, 3, 4, 5] for _ in req["pairs"]]
        else:
            records.append({"event": "request", "local": req["local"], "custom_id": req["custom_id"], "pairs": None})
        return [json.dumps(r) for r in records]
    _pending_then(scenario, mutate)


def test_a_planted_huge_request_number_does_not_allocate_by_its_value(tmp_path: Path) -> None:
    import subprocess
    import sys

    code = (
        "import resource, sys\n"
        "resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))\n"
        "from pathlib import Path\n"
        "from rubric_gate.batch.journal import RequestIndex\n"
        f"index = RequestIndex(Path({str(tmp_path / 'j')!r}), 'rgabcdef012345')\n"
        "index.add('rgabcdef012345-999999999', 0)\n"
        "print(len(index))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2] / "src")}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr[-500:]


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
    from tests.action.test_cache_evidence import (
        ActionsRuns,
        _base_ref_env,
        _copied,
        _lines,
        _standard,
        _warm_main,
    )

    lines = _warm_main(scenario)
    planted = [dict(v, answer="no") if (v["item"], v["check_text"]) == ("R4", TEXTS["C"]) else v for v in lines]
    runs = ActionsRuns(scenario)
    runs.add_run(event="push", branch="main", verdicts=_lines(planted), head_sha=head_sha_of_run(scenario))
    if route is not None:
        original = runs._route
        runs._route = lambda method, path: route(method, path) or original(method, path)  # type: ignore[method-assign]
    head = scenario.git.commit({VERDICTS: _copied(planted)}, "record the 'cache's' verdicts")
    result = _gate(scenario, head, judge="openai:fake-model", env_extra=_base_ref_env(scenario))
    assert result.code == 1, result.stdout + result.stderr
    blocking = [f for f in _standard(result) if f["blocking"]]
    assert len(blocking) == 1 and "C on R4: yes -> no" in blocking[0]["message"], _standard(result)


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


class TestIdCollisions:
    def test_an_added_rubric_taking_an_existing_id(self, scenario: Scenario) -> None:
        """A second file with id `demo` and A left out: whoever loads `demo` by id may get it."""
        head = scenario.git.commit({"rubrics/demo-lite.yaml": rubric_yaml(["B", "C", "D"])}, "add a lighter demo")
        _not_green(scenario, head)

    def test_a_rename_and_a_new_file_under_the_old_path_with_the_old_id(self, scenario: Scenario) -> None:
        """demo.yaml moves to kept.yaml (id kept: `demo`); a new demo.yaml without A takes id `demo` too."""
        scenario.git("mv", RUBRIC, "rubrics/kept.yaml")
        head = scenario.git.commit({RUBRIC: rubric_yaml(["B", "C", "D"])}, "move; a new demo without A")
        _not_green(scenario, head)


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
        _label(scenario, "labeled")
        _not_green(scenario, head, labels=(OVERRIDE,))

    @pytest.mark.parametrize("name", [CALIBRATION, VERDICTS])
    def test_a_data_file_made_a_directory(self, scenario: Scenario, name: str) -> None:
        scenario.git("rm", "-q", "--", name)
        head = scenario.git.commit({f"{name}/x": "{}\n"}, "a directory now")
        # Read as the file's deletion (which the override may pass, as it passes a plain deletion).
        _not_green(scenario, head)

    @pytest.mark.parametrize("name", [CALIBRATION, VERDICTS])
    def test_a_data_file_with_invalid_utf8(self, scenario: Scenario, name: str) -> None:
        path = scenario.git.path / name
        path.write_bytes(path.read_bytes() + b'{"id": "\xff\xfe"}\n')
        scenario.git("add", "--", name)
        scenario.git("commit", "-q", "-m", "bad bytes")
        head = scenario.git("rev-parse", "HEAD")
        _label(scenario, "labeled")
        _not_green(scenario, head, labels=(OVERRIDE,))

    def test_a_verdict_cache_input_at_dot_git(self, scenario: Scenario) -> None:
        """A misconfigured `verdict_cache: .git` must be refused, not have the run empty the repository."""
        head = scenario.git.commit(DELETE_A, "delete A")
        result = _gate(scenario, head, verdict_cache=".git")
        assert result.code in (1, 2), result.stdout + result.stderr
        assert (scenario.git.path / ".git" / "HEAD").exists()


@pytest.mark.parametrize("batch_id", ["batch_missing", "../files/file_1", "batch_1/../../files", "", "x" * 5000])
def test_a_planted_open_batch_with_a_batch_id_the_provider_does_not_hold(scenario: Scenario, batch_id: str) -> None:
    def mutate(lines: list[str]) -> list[str]:
        records = [json.loads(line) for line in lines]
        opened = next(r for r in records if r.get("event") == "open")
        req = next(r for r in records if r.get("event") == "request")
        local = "rg0123456789ab"
        return [*lines, json.dumps({**opened, "local": local}),
                json.dumps({**req, "local": local, "custom_id": local + req["custom_id"][len(req["local"]):]}),
                json.dumps({"event": "submitted", "local": local, "batch_id": batch_id})]
    _pending_then(scenario, mutate, fake_errors=True)


def test_a_planted_second_journal_entry_for_the_real_batch_with_its_pairs_swapped(scenario: Scenario) -> None:
    """The real batch_id under a planted local whose request lines keep the provider's custom_ids."""
    def mutate(lines: list[str]) -> list[str]:
        records = [json.loads(line) for line in _swap_custom_ids(lines)]
        opened = next(r for r in records if r.get("event") == "open")
        sub = next(r for r in records if r.get("event") == "submitted")
        local = "rg0123456789ab"
        extra = [{**opened, "local": local}]
        extra += [{**r, "local": local} for r in records if r.get("event") == "request"]
        extra.append({**sub, "local": local})
        return [*lines, *map(json.dumps, extra)]
    _pending_then(scenario, mutate)
