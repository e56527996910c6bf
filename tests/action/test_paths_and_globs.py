"""Which files are gated: renames, moves out of the globs, path spellings (case, NFD, trailing spaces,
newlines), symlinks and submodules, shallow checkouts read through the API, and the workspace files
the action writes. A rubric cannot leave the gate by changing how its path is spelled.
"""

from __future__ import annotations

import json
import os
import subprocess
import unicodedata

import pytest
import yaml

from tests.action.harness import (
    CALIBRATION,
    DELETE_A,
    LABELS,
    NEWLINE_RUBRIC,
    REPO,
    RUBRIC,
    TEXTS,
    VERDICTS,
    Scenario,
    calibration_jsonl,
    commit_on_main,
    conclusion_of,
    flip_answer,
    judged_by,
    keyed_line,
    not_green,
    rejected_run,
    rubric_with_keys,
    rubric_yaml,
    run_gated,
    shallow_clone,
    shallow_workspace,
    verdict_line,
    verdicts_jsonl,
)

# -- rubrics that still do work -----------------------------------------------------------------

def test_moving_a_rubric_out_of_the_glob_is_gated_as_its_deletion(scenario: Scenario) -> None:
    """Renamed out of `rubrics/**`, the rubric is no longer gated: its next edit would pass unseen."""
    (scenario.git.path / "archive").mkdir()
    scenario.git("mv", RUBRIC, "archive/demo.yaml")
    head = scenario.git.commit({}, "archive the rubric")
    result = scenario.run(head)
    assert result.code == 1, result.stdout + result.stderr
    (rubric,) = result.report()["rubrics"]
    assert rubric["status"] == "removed" and rubric["file"] == RUBRIC
    assert "archive/demo.yaml" in " ".join(rubric["failures"]) and "unique catch" in " ".join(rubric["failures"])


def _outside_repo(scenario: Scenario) -> list[str]:
    """Requests for anything but this repository (and GET /user, which finds the sticky comment's author)."""
    return [p for _, p in scenario.fake.requests
            if not p.startswith(f"/repos/{REPO}/") and p not in (f"/repos/{REPO}", "/user")]


@pytest.mark.parametrize(("key", "path"), [
    ("verdicts", "../../../other/private/contents/secret.jsonl"),  # another repository's file
    ("calibration", "../../../../orgs/acme/members"),  # any endpoint the token can read
    ("verdicts", "/etc/passwd"),
    ("calibration", "calibration/../../x.jsonl"),
])
def test_head_paths_outside_the_repository_are_refused_through_the_api(scenario: Scenario, key: str, path: str) -> None:
    """In a shallow checkout files are read through the contents API: `..` must not walk the API."""
    head = scenario.git.commit({RUBRIC: rubric_with_keys(["A", "B", "C", "D"], **{key: path})})
    result = scenario.run(head, workspace=shallow_workspace(scenario))
    assert "Traceback" not in result.stderr, result.stderr
    assert result.report()["files_from"] == "rest"
    assert _outside_repo(scenario) == []
    assert result.code == 2 and result.outputs["decision"] == "fail"
    body = scenario.fake.marked_comments()[0]["body"]
    assert "could not be gated" in body and "inside the repository" in body


def test_head_paths_outside_the_repository_are_refused_with_git(scenario: Scenario) -> None:
    head = scenario.git.commit({RUBRIC: rubric_with_keys(["A", "B", "C", "D"], verdicts="/proc/self/environ")})
    result = scenario.run(head)
    assert result.report()["files_from"] == "git"
    assert result.code == 2, result.stderr
    body = scenario.fake.marked_comments()[0]["body"]
    assert "inside the repository" in body and "root:" not in body


@pytest.mark.parametrize("new_path", ["rubrics/renamed.yaml", "elsewhere/demo.yaml"])
def test_a_rubric_moved_and_rewritten_is_still_gated(scenario: Scenario, new_path: str) -> None:
    """Too rewritten for git's rename detection: a deletion plus a new file, unless paired by id."""
    scenario.git("rm", "-q", RUBRIC)
    data = yaml.safe_load(rubric_yaml(["B", "C", "D"]))  # deletes A, which holds R1's only catch
    rewritten = "".join(f"# note {i}\n" for i in range(60)) + yaml.safe_dump(data, sort_keys=False, width=20)
    head = scenario.git.commit({new_path: rewritten}, "move and rewrite")
    diff = scenario.git("diff", "--name-status", "--find-renames", scenario.base_sha, head)
    assert not diff.startswith("R")  # git sees a deletion and an addition
    result = scenario.run(head)
    assert result.code == 1, result.stderr
    (rubric,) = result.report()["rubrics"]
    if not new_path.startswith("rubrics/"):  # out of the glob it is no longer gated: a deletion
        assert rubric["status"] == "removed" and "unique catch" in " ".join(rubric["failures"])
        return
    assert rubric["file"] == new_path and rubric["base_file"] == RUBRIC and rubric["status"] == "renamed"
    assert {c["check"]: c["decision"] for c in rubric["report"]["changes"]} == {"A": "rejected"}
    (run,) = scenario.fake.check_runs.values()
    assert {a["path"] for a in run["output"]["annotations"]} == {new_path}


def test_a_committed_output_directory_is_not_written_through_or_passed_off(scenario: Scenario) -> None:
    """The PR commits `.rubric-gate/` with symlinks out of the workspace and forged judged verdicts."""
    target = scenario.tmp / "outside.txt"
    target.write_text("untouched\n")
    out = scenario.git.path / ".rubric-gate"
    (out / "verdicts").mkdir(parents=True)
    (out / "report.json").symlink_to(target)
    (out / "token").symlink_to(scenario.git.path / ".git" / "config")  # what an artifact upload would follow
    (out / "verdicts" / "demo.jsonl").write_text('{"item": "R1", "check_text": "x", "answer": "no"}\n')
    scenario.git("add", ".rubric-gate")
    head = scenario.git.commit({RUBRIC: rubric_yaml(["B", "C", "D"])}, "delete A, plant outputs")
    result = scenario.run(head)
    # Refused before anything is written; the output directory is cleaned first, so no symlink or
    # planted output is left for the upload step (git still holds them: only the checkout's copies go).
    assert result.code == 2, result.stderr
    assert "holds files the repository tracks" in result.stderr and "Traceback" not in result.stderr
    assert target.read_text() == "untouched\n"
    assert not (out / "report.json").is_symlink() and not (out / "token").is_symlink()
    assert not (out / "verdicts").exists()
    changed = scenario.git("status", "--porcelain", "--untracked-files=no").splitlines()
    assert changed and all(line.strip().startswith("D .rubric-gate/") for line in changed)  # nothing else touched


# -- globs: what a case-sensitive checkout and every other tool reads ----------------------------

def test_a_case_only_move_out_of_the_glob_is_gated_as_a_deletion(scenario: Scenario) -> None:
    scenario.git("mv", RUBRIC, "RUBRICS-tmp.yaml")
    (scenario.git.path / "RUBRICS").mkdir()
    scenario.git("mv", "RUBRICS-tmp.yaml", "RUBRICS/demo.yaml")
    head = scenario.git.commit({}, "move the rubric to RUBRICS/")
    result = run_gated(scenario, head)
    assert result.code == 1, result.stdout + result.stderr


# -- rubric files: renames, rewrites, paths ------------------------------------------------------

def test_a_rename_with_an_edit_is_gated_as_the_edit(scenario: Scenario) -> None:
    scenario.git("mv", RUBRIC, "rubrics/demo-renamed.yaml")
    head = scenario.git.commit({"rubrics/demo-renamed.yaml": rubric_yaml(["B", "C", "D"])}, "move and delete A")
    assert run_gated(scenario, head).code == 1


def test_a_rewrite_under_a_new_name_id_and_path_spelling_is_gated_as_the_edit(scenario: Scenario) -> None:
    text = rubric_yaml(["D", "C", "B"]).replace("id: demo", "id: demo-v2").replace(
        "calibration: calibration/demo.jsonl", "calibration: ./calibration//demo.jsonl")
    head = scenario.git.commit({RUBRIC: None, "rubrics/nested/other.yml": "# rewritten\n" + text}, "rewrite")
    assert run_gated(scenario, head).code == 1


def test_a_rubric_moved_out_of_the_glob_and_a_copy_of_its_labels_back_in(scenario: Scenario) -> None:
    from tests.action.harness import CALIBRATION, calibration_jsonl

    text = rubric_yaml(["B", "C", "D"]).replace("id: demo", "id: fresh").replace(
        CALIBRATION, "calibration/fresh.jsonl").replace(VERDICTS, "calibration/fresh.verdicts.jsonl")
    scenario.git("mv", RUBRIC, "archive-demo.yaml")
    head = scenario.git.commit({"rubrics/fresh.yaml": text, "calibration/fresh.jsonl": calibration_jsonl(),
                                "calibration/fresh.verdicts.jsonl": verdicts_jsonl(TEXTS)},
                               "archive demo; a fresh rubric without A")
    assert run_gated(scenario, head).code == 1


def test_a_rename_to_the_nfd_spelling_of_its_name_with_an_edit(scenario: Scenario) -> None:
    import unicodedata

    nfc = unicodedata.normalize("NFC", "rubrics/caf\u00e9.yaml")
    main = commit_on_main(scenario, {RUBRIC: None, nfc: rubric_yaml(["A", "B", "C", "D"])}, "rename to café")
    scenario.git("reset", "-q", "--hard", main)
    nfd = unicodedata.normalize("NFD", nfc)
    head = scenario.git.commit({nfc: None, nfd: rubric_yaml(["B", "C", "D"])}, "NFD name, delete A")
    assert run_gated(scenario, head).code == 1


def test_a_rubric_moved_to_a_trailing_space_name_is_a_deletion(scenario: Scenario) -> None:
    scenario.git("mv", RUBRIC, "rubrics/demo.yaml ")
    head = scenario.git.commit({}, "rename with a trailing space")
    assert run_gated(scenario, head).code == 1


# -- globs and paths: what the workflow's `rubrics` input matches ----------------------------------

def test_a_rubric_moved_into_an_excluded_folder_is_a_deletion(scenario: Scenario) -> None:
    scenario.git("mv", RUBRIC, "rubrics/drafts-demo.yaml")
    (scenario.git.path / "rubrics" / "drafts").mkdir()
    scenario.git("mv", "rubrics/drafts-demo.yaml", "rubrics/drafts/demo.yaml")
    head = scenario.git.commit({}, "park demo among the drafts")
    assert run_gated(scenario, head, rubrics="rubrics/**/*.y*ml\n!rubrics/drafts/**").code == 1


def test_a_rename_to_an_upper_case_extension_with_an_edit_is_gated(scenario: Scenario) -> None:
    scenario.git("mv", RUBRIC, "rubrics/demo.YAML")
    head = scenario.git.commit({"rubrics/demo.YAML": rubric_yaml(["B", "C", "D"])}, "demo.YAML, without A")
    assert run_gated(scenario, head).code == 1


def test_a_symlink_alias_of_the_rubric_is_bad_input(scenario: Scenario) -> None:
    import os

    os.symlink("demo.yaml", scenario.git.path / "rubrics" / "alias.yaml")
    scenario.git("add", "rubrics/alias.yaml")
    head = scenario.git.commit({RUBRIC: rubric_yaml(["B", "C", "D"])}, "an alias; delete A")
    assert run_gated(scenario, head).code != 0


# -- the glob: spellings of a path ---------------------------------------------------------------

class TestGlobSpelling:
    @pytest.mark.parametrize("target", ["rubrics/demo.yml", "rubr\u0456cs/demo.yaml", "rubrics/demo.yaml.bak",
                                        "Rubrics/demo.yaml", "rubrics/demo.yaml/inner.yaml"],
                             ids=["yml", "cyrillic-i", "bak", "capital-dir", "dir-named-yaml"])
    def test_a_move_with_a_deletion_of_a(self, scenario: Scenario, target: str) -> None:
        scenario.git("rm", "-q", RUBRIC)
        head = scenario.git.commit({target: rubric_yaml(["B", "C", "D"])}, f"move to {target}, without A")
        rejected_run(scenario, head)

    def test_a_second_rubric_file_for_the_same_labels_under_a_lookalike_dir(self, scenario: Scenario) -> None:
        """A lenient copy outside the glob is not a rubric the gate knows; the original stays."""
        head = scenario.git.commit({"rubr\u0456cs/demo.yaml": rubric_yaml(["B"]), **DELETE_A}, "copy; delete A")
        rejected_run(scenario, head)


# -- the output directory and the verdict cache --------------------------------------------------

class TestWorkspaceFiles:
    def test_the_output_dir_committed_as_a_regular_file(self, scenario: Scenario) -> None:
        head = scenario.git.commit({".rubric-gate": "decision: pass\n", **DELETE_A}, "a file where output goes")
        result = run_gated(scenario, head)
        assert conclusion_of(scenario, head) is None  # refused before it gates: no check run to read
        assert result.code == 2, result.stdout + result.stderr

    def test_the_output_dir_committed_as_a_symlink_to_the_git_dir(self, scenario: Scenario) -> None:
        os.symlink(".git", scenario.git.path / ".rubric-gate")
        scenario.git("add", ".rubric-gate")
        head = scenario.git.commit(DELETE_A, "output into .git")
        result = run_gated(scenario, head)
        assert conclusion_of(scenario, head) is None  # refused before it gates: no check run to read
        assert result.code == 2, result.stdout + result.stderr
        assert not (scenario.git.path / ".git" / "report.json").exists()

    def test_a_planted_keyed_cache_in_a_custom_cache_dir(self, scenario: Scenario) -> None:
        planted = keyed_line("B", "R1", "no")
        head = scenario.git.commit({"cache/verdicts.jsonl": planted, **DELETE_A}, "plant the cache")
        result = run_gated(scenario, head, verdict_cache="cache", **judged_by(scenario))
        assert conclusion_of(scenario, head) is None  # refused before it gates: no check run to read
        assert result.code == 2, result.stdout + result.stderr
        assert not (scenario.git.path / "cache" / "verdicts.jsonl").exists()  # the always-run save keeps nothing

    def test_an_untracked_cache_restored_with_a_forged_line_is_only_the_judges(self, scenario: Scenario) -> None:
        """actions/cache restores what an earlier run saved; a line in it keyed to another task
        (a lenient rubric's, say) is not this rubric's evidence."""
        cache = scenario.git.path / ".rubric-gate" / "cache"
        cache.mkdir(parents=True)
        (cache / "verdicts.jsonl").write_text(keyed_line("B", "R1", "no", task_hash="0" * 16))
        head = scenario.git.commit(DELETE_A, "delete A")
        rejected_run(scenario, head, **judged_by(scenario))


class TestShallowCheckout:
    def test_a_symlink_rubric_read_through_the_api(self, scenario: Scenario) -> None:
        os.symlink("../calibration/demo.jsonl", scenario.git.path / "rubrics" / "alias.yaml")
        scenario.git("add", "rubrics/alias.yaml")
        head = scenario.git.commit(DELETE_A, "an alias; delete A")
        result = run_gated(scenario, head, workspace=shallow_clone(scenario))
        assert conclusion_of(scenario, head) == "failure", result.stdout
        assert result.code == 2 and result.report()["files_from"] == "rest", result.stdout

    def test_a_verdict_file_over_a_megabyte_read_through_the_api(self, scenario: Scenario) -> None:
        """Over 1 MB the contents API sends no content; the blob must still be read, all of it."""
        padding = "".join(verdict_line(f"filler {n} " + "x" * 200, "R1", "yes") for n in range(5000))
        main = commit_on_main(scenario, {VERDICTS: verdicts_jsonl(TEXTS) + padding}, "a large record")
        scenario.git("reset", "-q", "--hard", main)
        record = flip_answer(verdicts_jsonl(TEXTS), "B", "R1", "no") + padding
        head = scenario.git.commit({VERDICTS: record, **DELETE_A}, "B no on R1; delete A")
        result = run_gated(scenario, head, workspace=shallow_clone(scenario))
        assert result.code == 1 and result.report()["files_from"] == "rest", result.stdout + result.stderr
        assert conclusion_of(scenario, head) == "failure"

    def test_a_rename_out_of_the_glob_read_through_the_api(self, scenario: Scenario) -> None:
        (scenario.git.path / "archive").mkdir()
        scenario.git("mv", RUBRIC, "archive/demo.yaml")
        head = scenario.git.commit({"archive/demo.yaml": rubric_yaml(["B", "C", "D"])}, "archive, without A")
        result = run_gated(scenario, head, workspace=shallow_clone(scenario))
        assert conclusion_of(scenario, head) == "failure", result.stdout
        assert result.code == 1 and result.report()["files_from"] == "rest", result.stdout

    def test_a_copy_reported_as_copied_with_the_original_edited(self, scenario: Scenario) -> None:
        scenario.fake.copies = {"rubrics/copy.yaml": RUBRIC}
        head = scenario.git.commit({"rubrics/copy.yaml": rubric_yaml(["A", "B", "C", "D"]), **DELETE_A},
                                   "copy demo; delete A from the original")
        result = run_gated(scenario, head, workspace=shallow_clone(scenario))
        assert conclusion_of(scenario, head) == "failure", result.stdout
        assert result.code == 1 and result.report()["files_from"] == "rest", result.stdout


# -- file names git stores as bytes -----------------------------------------------------------------

class TestFileNameBytes:
    def test_a_rubric_renamed_to_a_name_that_is_not_utf8(self, scenario: Scenario) -> None:
        root = bytes(scenario.git.path)
        os.rename(root + b"/rubrics/demo.yaml", root + b"/rubrics/\xff.yaml")
        with open(root + b"/rubrics/\xff.yaml", "w", encoding="utf-8") as handle:
            handle.write(rubric_yaml(["B", "C", "D"]))
        subprocess.run([b"git", b"add", b"-A"], cwd=root, check=True)
        subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "bytes"],
                       cwd=root, check=True)
        head = scenario.git("rev-parse", "HEAD")
        result = scenario.run(head)
        assert result.code == 2 and conclusion_of(scenario, head) == "failure", result.stdout + result.stderr


# -- paths: the same file under another spelling, and twins ------------------------------------

def _nfc_main(scenario: Scenario) -> tuple[str, str]:
    """main moves the labels to `calibration/démo.jsonl` (NFC); returns it and its NFD twin."""
    nfc = "calibration/d\u00e9mo.jsonl"
    nfd = unicodedata.normalize("NFD", nfc)
    main = commit_on_main(scenario, {CALIBRATION: None, nfc: calibration_jsonl(),
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
        rejected_run(scenario, head)

    def test_the_nfd_twin_added_beside_the_set_without_a_repoint(self, scenario: Scenario) -> None:
        """A consumer on macOS (NFD file names) may read the twin; the gate reads git's name."""
        nfc, nfd = _nfc_main(scenario)
        head = scenario.git.commit({nfd: calibration_jsonl({**LABELS, "R1": "pass"}), **{
            RUBRIC: rubric_yaml(["B", "C", "D"]).replace(CALIBRATION, nfc)}}, "an NFD twin; delete A")
        rejected_run(scenario, head)

    def test_a_repoint_to_a_case_twin_of_the_verdict_file(self, scenario: Scenario) -> None:
        twin = VERDICTS.replace("demo", "Demo")
        record = verdicts_jsonl(TEXTS).replace(
            json.dumps({"item": "R1", "check_text": TEXTS["B"], "answer": "yes"}),
            json.dumps({"item": "R1", "check_text": TEXTS["B"], "answer": "no"}))
        text = rubric_yaml(["B", "C", "D"]).replace(VERDICTS, twin)
        head = scenario.git.commit({twin: record, RUBRIC: text}, "a case twin of the verdicts; delete A")
        rejected_run(scenario, head)

    @pytest.mark.parametrize("spelling", ["./calibration/demo.jsonl", "calibration//demo.jsonl",
                                          "calibration/./demo.jsonl", "rubrics/../calibration/demo.jsonl",
                                          "/calibration/demo.jsonl", "calibration\\demo.jsonl"],
                             ids=["dot", "double-slash", "dot-segment", "dotdot", "leading-slash", "backslash"])
    def test_a_calibration_path_spelled_otherwise_with_a_relabel_in_the_original(self, scenario: Scenario,
                                                                                  spelling: str) -> None:
        text = rubric_yaml(["A", "B", "C", "D"]).replace(f"calibration: {CALIBRATION}", f"calibration: '{spelling}'")
        head = scenario.git.commit({RUBRIC: text, CALIBRATION: calibration_jsonl({**LABELS, "R1": "pass"})},
                                   f"{spelling}; relabel R1")
        not_green(scenario, head)

    def test_a_yml_twin_of_the_rubric_with_its_id(self, scenario: Scenario) -> None:
        head = scenario.git.commit({"rubrics/demo.yml": rubric_yaml(["B", "C", "D"])}, "demo.yml beside demo.yaml")
        rejected_run(scenario, head)

    def test_a_case_twin_of_the_rubric_with_its_id_in_nfd(self, scenario: Scenario) -> None:
        """main names the rubric `démo`; the PR adds `rubrics/Demo.yaml` with the id in NFD."""
        main = commit_on_main(scenario, {RUBRIC: rubric_yaml(["A", "B", "C", "D"]).replace("id: demo", "id: d\u00e9mo")},
                        "the rubric id gets its accent")
        scenario.git("reset", "-q", "--hard", main)
        twin = rubric_yaml(["B", "C", "D"]).replace("id: demo", "id: de\u0301mo")
        head = scenario.git.commit({"rubrics/Demo.yaml": twin}, "Demo.yaml, id in NFD, without A")
        rejected_run(scenario, head)


# -- the rubrics glob: excludes, two globs, moves between them ----------------------------------

class TestGlobs:
    GLOBS = "rubrics/**/*.y*ml\n!rubrics/drafts/**"

    @pytest.mark.parametrize("target", ["rubrics/DRAFTS/demo.yaml", "rubrics/drafts./demo.yaml",
                                        "rubrics/drafts\u200b/demo.yaml", "rubrics/dr\u0430fts/demo.yaml"],
                             ids=["case", "trailing-dot", "zero-width", "cyrillic-a"])
    def test_a_move_next_to_the_excluded_folder_with_a_deletion(self, scenario: Scenario, target: str) -> None:
        scenario.git("rm", "-q", RUBRIC)
        head = scenario.git.commit({target: rubric_yaml(["B", "C", "D"])}, f"move to {target!r}; delete A")
        rejected_run(scenario, head, rubrics=self.GLOBS)

    def test_a_move_between_two_globs_with_a_deletion(self, scenario: Scenario) -> None:
        scenario.git("rm", "-q", RUBRIC)
        head = scenario.git.commit({"policies/demo.yaml": rubric_yaml(["B", "C", "D"])}, "to policies/, without A")
        rejected_run(scenario, head, rubrics="rubrics/*.yaml, policies/*.yaml")

    def test_an_exclude_added_by_a_move_into_drafts_while_a_copy_stays(self, scenario: Scenario) -> None:
        """The rubric goes to drafts/ (out of the glob), a copy without A comes in under its id."""
        scenario.git("rm", "-q", RUBRIC)
        head = scenario.git.commit({"rubrics/drafts/demo.yaml": rubric_yaml(["A", "B", "C", "D"]),
                                    "rubrics/demo-v2.yaml": rubric_yaml(["B", "C", "D"])}, "drafts; a copy without A")
        rejected_run(scenario, head, rubrics=self.GLOBS)

    def test_an_exclude_spelled_with_a_leading_dot_slash(self, scenario: Scenario) -> None:
        scenario.git("rm", "-q", RUBRIC)
        head = scenario.git.commit({"rubrics/drafts/demo.yaml": rubric_yaml(["B", "C", "D"])}, "into drafts, without A")
        rejected_run(scenario, head, rubrics="rubrics/**/*.y*ml\n!./rubrics/drafts/**")


# -- one reader: a submodule where a file was --------------------------------------------------------

@pytest.mark.parametrize("name", [RUBRIC, CALIBRATION, VERDICTS])
def test_a_file_replaced_by_a_submodule_is_refused(scenario: Scenario, name: str) -> None:
    """A gitlink has no blob: read by path it is nothing, or whatever a checkout puts there."""
    scenario.git("rm", "-q", "--cached", name)
    (scenario.git.path / name).unlink()
    scenario.git("update-index", "--add", "--cacheinfo", f"160000,{scenario.base_sha},{name}")
    head = scenario.git.commit({}, f"{name} becomes a submodule")
    result = scenario.run(head)
    assert "Traceback" not in result.stderr, result.stderr
    assert result.code == 2 and result.outputs.get("decision", "fail") == "fail", result.stdout + result.stderr
    assert f"{name}: is a submodule (mode 160000)" in result.stdout + result.stderr
    assert [r["conclusion"] for r in scenario.fake.check_runs.values()] in ([], ["failure"])


# -- a directory name with a newline, read through the API -------------------------------------------

def test_a_rubric_under_a_directory_named_with_a_newline_is_gated_in_a_shallow_checkout(scenario: Scenario) -> None:
    """The git-side test's route through the files API and the trees API (no history to diff)."""
    from tests.action.harness import commit_on_main, shallow_workspace

    main = commit_on_main(scenario, {NEWLINE_RUBRIC: rubric_yaml(["A", "B", "C", "D"]).replace("id: demo", "id: nl")},
                    "a team folder")
    scenario.git("reset", "-q", "--hard", main)
    head = scenario.git.commit({NEWLINE_RUBRIC: rubric_yaml(["B", "C", "D"]).replace("id: demo", "id: nl")},
                               "delete A from the team's rubric")
    result = scenario.run(head, workspace=shallow_workspace(scenario))
    assert result.code == 1 and result.outputs["decision"] == "fail", result.stdout + result.stderr
    assert "read files through the GitHub API" in result.stdout
    (rubric,) = result.report()["rubrics"]
    assert rubric["file"] == NEWLINE_RUBRIC
