"""Gate the merge, not the branch, whatever reads the files: the merge that will land must be the
one the gate reviewed (`action.commits.merge_check`). With history, git's merge in the checkout; in a
shallow checkout read through the REST API, GitHub's test merge commit of the PR
(`merge_commit_sha`), from the fake GitHub, which makes it with git's merge as GitHub does.
End to end through `rubric-gate action`."""

from __future__ import annotations

import os
import subprocess

import pytest

from tests.action.harness import (
    CALIBRATION,
    LABELS,
    RUBRIC,
    TEXTS,
    VERDICTS,
    Result,
    Scenario,
    commit_on_main,
    criss_cross,
    rubric_yaml,
    run_with_reader,
    verdict_line,
    verdicts_jsonl,
)

Y = "Is MFA required for administrators?"


def _conclusion(scenario: Scenario, head: str) -> str | None:
    runs = [r for r in scenario.fake.check_runs.values() if r["head_sha"] == head]
    return max(runs, key=lambda r: r["id"]).get("conclusion") if runs else None


def _merge_findings(result: Result) -> list[dict]:
    return [f for f in result.report()["standard"] if f.get("kind", "").startswith("merge.")]


def _duplicate_anchor(scenario: Scenario) -> str:
    """main and the PR each define the YAML anchor `&tb`: both load, and git merges them cleanly
    into a rubric that does not (a duplicate anchor)."""
    base_text = rubric_yaml(["A", "B", "C", "D"])
    main_text = base_text.replace(f"  text: {TEXTS['B']}\n", f"  text: &tb {TEXTS['B']}\n") + \
        "- id: Z\n  text: *tb\n  origin: label\n"
    commit_on_main(scenario, {RUBRIC: main_text}, "main: Z, frozen, B's text by alias")
    lenient = "Is the design written in English?"
    lines = "".join(verdict_line(lenient, i, "yes") for i in LABELS)
    return scenario.git.commit({RUBRIC: base_text.replace("- id: D\n", f"- id: Y\n  text: &tb {lenient}\n- id: D\n"),
                                VERDICTS: verdicts_jsonl(TEXTS) + lines}, "add Y")


@pytest.mark.parametrize("reader", ["git", "rest"])
class TestTheMergeThatLands:
    def test_a_criss_cross_history(self, scenario: Scenario, reader: str) -> None:
        head = criss_cross(scenario)
        result = run_with_reader(scenario, head, reader)
        assert result.code == 1 and _conclusion(scenario, head) == "failure", result.stdout + result.stderr
        (finding,) = _merge_findings(result)
        if reader == "git":
            assert finding["kind"] == "merge.bases" and "2 merge bases" in finding["message"], finding
        else:  # one merge base through the API: what the merge does to the rubric shows it
            assert finding["kind"] == "merge.differs" and finding["file"] == RUBRIC, finding
            assert finding["message"].startswith("GitHub's test merge commit "), finding
            assert "drops check `A`" in finding["message"], finding
        assert finding["rule"] == "override" and finding["blocking"], finding

    def test_a_duplicate_anchor_the_text_merge_makes(self, scenario: Scenario, reader: str) -> None:
        head = _duplicate_anchor(scenario)
        result = run_with_reader(scenario, head, reader)
        assert result.code == 1 and _conclusion(scenario, head) == "failure", result.stdout + result.stderr
        (finding,) = _merge_findings(result)
        assert finding["file"] == RUBRIC and "into a rubric that does not load" in finding["message"], finding
        assert "duplicate anchor" in finding["message"], finding
        named = "GitHub's test merge commit " if reader == "rest" else "git's merge of the head "
        assert finding["message"].startswith(named), finding

    def test_both_sides_changing_the_rubric_merge_as_reviewed(self, scenario: Scenario, reader: str) -> None:
        """main gives A a `source`, the PR adds Y after B: git's merge puts Y after B, the gate's
        model (the PR's changes applied onto the tip) at the end; checks compare by id, so the
        merge is the one reviewed: no finding."""
        a_text = f"  text: {TEXTS['A']}\n"
        commit_on_main(scenario, {RUBRIC: rubric_yaml(["A", "B", "C", "D"]).replace(a_text, a_text + "  source: R1\n")},
                 "main: where A came from")
        lines = "".join(verdict_line(Y, i, "yes") for i in LABELS)
        pr_text = rubric_yaml(["A", "B", "C", "D"]).replace("- id: C\n", f"- id: Y\n  text: {Y}\n- id: C\n")
        head = scenario.git.commit({RUBRIC: pr_text, VERDICTS: verdicts_jsonl(TEXTS) + lines}, "add Y")
        tree = scenario.git("merge-tree", "--write-tree", scenario.base_sha, head).split()[0]
        merged = scenario.git("show", f"{tree}:{RUBRIC}")
        assert "source: R1" in merged and merged.index("id: Y") < merged.index("id: C")  # a clean merge
        result = run_with_reader(scenario, head, reader)
        assert _merge_findings(result) == [], result.stdout
        assert result.code == 0 and _conclusion(scenario, head) == "success", result.stdout + result.stderr

    def test_a_merge_with_conflicts_is_said_not_skipped(self, scenario: Scenario, reader: str) -> None:
        """GitHub merges nothing with conflicts, and resolving them is a push the gate runs on:
        the gate's own model of the merge stands, and the comment says there was none to compare."""
        commit_on_main(scenario, {"README.md": "main's\n"}, "main edits the README")
        head = scenario.git.commit({"README.md": "the PR's\n", RUBRIC: rubric_yaml(["A", "B", "C", "D", "A2"])},
                                   "the PR edits it too; adds A2")
        result = run_with_reader(scenario, head, reader)
        assert result.code == 0 and _conclusion(scenario, head) == "success", result.stdout + result.stderr
        (finding,) = _merge_findings(result)
        assert (finding["kind"], finding["rule"], finding["blocking"]) == ("merge.conflicts", "allowed", False), finding
        assert "conflicts" in finding["message"] and "will not merge it until they are resolved" in finding["message"]
        body = scenario.fake.marked_comments()[-1]["body"]
        assert "- ⚠️ The merge: " in body and 'under "The merge" need' not in body, body


class TestGitHubsTestMerge:
    """A checkout read through the API compares GitHub's test merge commit, the one of this head
    and this base tip; where there is none (yet), the PR fails, saying why."""

    def _moved(self, scenario: Scenario) -> str:
        commit_on_main(scenario, {"README.md": "main moved on\n"}, "main edits the README")
        return scenario.git.commit({RUBRIC: rubric_yaml(["A", "B", "C", "D", "A2"])}, "add A2")

    def test_the_test_merge_costs_a_commit_and_a_tree_read(self, scenario: Scenario) -> None:
        head = self._moved(scenario)
        result = run_with_reader(scenario, head, "rest")
        assert result.code == 0 and _merge_findings(result) == [], result.stdout + result.stderr
        merge = scenario.fake._test_merges[(scenario.base_sha, head)]
        assert merge is not None
        reads = [path for method, path in scenario.fake.requests if merge in path]
        assert sorted(reads) == sorted([f"/repos/acme/rubrics/git/commits/{merge}",
                                        f"/repos/acme/rubrics/git/trees/{merge}"]), reads

    def test_asked_again_while_github_computes_it(self, scenario: Scenario) -> None:
        head = self._moved(scenario)
        scenario.fake.mergeable_pending = 3  # `mergeable: null` on three reads, then computed
        result = run_with_reader(scenario, head, "rest")
        assert _merge_findings(result) == [] and result.code == 0, result.stdout + result.stderr
        assert scenario.fake.mergeable_pending == 0

    def test_never_computed(self, scenario: Scenario) -> None:
        head = self._moved(scenario)
        scenario.fake.mergeable_pending = 10**6
        result = run_with_reader(scenario, head, "rest")
        assert result.code == 1 and _conclusion(scenario, head) == "failure", result.stdout + result.stderr
        (finding,) = _merge_findings(result)
        assert finding["kind"] == "merge.missing" and "`mergeable` is null" in finding["message"], finding
        assert "`fetch-depth: 0`" in finding["message"], finding

    def test_a_test_merge_of_another_head(self, scenario: Scenario) -> None:
        """A stale `merge_commit_sha` (made before the last push): not the merge of this head."""
        older = scenario.git.commit({"README.md": "older head\n"}, "an older head")
        head = self._moved(scenario)
        scenario.fake.test_merge_sha = older
        result = run_with_reader(scenario, head, "rest")
        assert result.code == 1, result.stdout + result.stderr
        (finding,) = _merge_findings(result)
        assert finding["kind"] == "merge.missing" and f"not the head {head[:7]}" in finding["message"], finding

    def test_a_test_merge_of_an_older_base_tip(self, scenario: Scenario) -> None:
        """GitHub makes the test merge anew on a push, a new merge base or after 12 hours, not when
        the base branch merely moves on: one of an older tip is not the merge that lands."""
        first = commit_on_main(scenario, {"README.md": "main moved on\n"}, "main edits the README")
        head = scenario.git.commit({RUBRIC: rubric_yaml(["A", "B", "C", "D", "A2"])}, "add A2")
        tree = scenario.git("merge-tree", "--write-tree", first, head).split()[0]
        scenario.fake.test_merge_sha = scenario.git("commit-tree", tree, "-p", first, "-p", head, "-m", "test merge")
        tip = commit_on_main(scenario, {"NOTES.md": "later\n"}, "main moves on again (same merge base)")
        result = run_with_reader(scenario, head, "rest")
        assert result.code == 1 and _conclusion(scenario, head) == "failure", result.stdout + result.stderr
        (finding,) = _merge_findings(result)
        assert finding["kind"] == "merge.missing" and f"the base tip {tip[:7]}" in finding["message"], finding
        assert "12 hours old" in finding["message"] and "`fetch-depth: 0`" in finding["message"], finding

    def test_a_head_the_tip_is_an_ancestor_of_reads_no_merge(self, scenario: Scenario) -> None:
        """The merge of a head built on the tip is the head's own tree: nothing to ask GitHub."""
        head = scenario.git.commit({RUBRIC: rubric_yaml(["A", "B", "C", "D", "A2"])}, "add A2")
        scenario.fake.mergeable_pending = 10**6
        result = run_with_reader(scenario, head, "rest")
        assert result.code == 0 and _merge_findings(result) == [], result.stdout + result.stderr


# -- what a reviewer reads ---------------------------------------------------------------------------

@pytest.mark.parametrize("reader", ["git", "rest"])
def test_the_comment_gives_the_merge_its_own_section(scenario: Scenario, reader: str) -> None:
    """The criss-cross finding under its own heading, which says what it is and what to do, not
    under "Labels and recorded verdicts"; the summary line points there; nothing in it is live."""
    from rubric_gate.action.render import MERGE_HEADING
    from tests.support import gfm

    head = criss_cross(scenario)
    result = run_with_reader(scenario, head, reader)
    body = scenario.fake.marked_comments()[-1]["body"]
    root = gfm.parse(body)
    top = gfm.top_level(root)
    headings = [e.text() for e in top if e.tag == "h3"]
    assert MERGE_HEADING in headings and "Labels and recorded verdicts" not in headings, headings
    assert MERGE_HEADING.startswith("The merge:") and "rebase" in MERGE_HEADING
    section = top[[e.text() for e in top].index(MERGE_HEADING) + 1:]
    listed = next(e for e in section if e.tag == "ul")
    (item,) = listed.find_all("li")
    message = _merge_findings(result)[0]["message"]
    where = "The merge" if reader == "git" else RUBRIC
    shown = item.text()  # commit ids are <code> (GitHub links none in code) and copy as written
    assert shown == f"❌ {where}: {message}".replace("`", "'"), shown
    assert (reader == "rest") == (RUBRIC in [c.text() for c in item.find_all("code")]), item  # a file: a code span
    assert any(p.text().startswith("Rebase the PR onto its base branch") for p in section if p.tag == "p")
    assert '1 finding under "The merge" needs the `rubric-gate:override` label.' in body
    assert 'under "Labels and recorded verdicts"' not in body
    own = (scenario.base_sha[:7], head[:7], result.report()["base_sha"][:7])
    run_link = "https://github.test/acme/rubrics/actions/runs/42"
    assert gfm.live_spans(root, allowed_links=(run_link,), own=own) == []


def test_conflicts_of_a_pr_that_changes_nothing_the_gate_reads_go_unsaid(scenario: Scenario) -> None:
    commit_on_main(scenario, {"README.md": "main's\n"}, "main edits the README")
    head = scenario.git.commit({"README.md": "the PR's\n"}, "the PR edits it too")
    result = run_with_reader(scenario, head, "git")
    assert result.code == 0 and result.report()["standard"] == [], result.stdout
    assert scenario.fake.marked_comments() == []  # no comment on a PR that changes no rubric


# -- calibration sets and verdict files the rubrics name -------------------------------------------

def _crafted_merge(scenario: Scenario, head: str, files: dict[str, str]) -> str:
    """A commit of the tip and the head whose tree is git's merge with `files` written over it:
    what GitHub's merge from a base the gate never read (a criss-cross) would leave, for a test
    merge to answer."""
    tree = scenario.git("merge-tree", "--write-tree", scenario.base_sha, head).split()[0]
    index = scenario.tmp / "crafted.index"
    env = {**os.environ, "GIT_INDEX_FILE": str(index)}

    def git(*args: str, text: str | None = None) -> str:
        return subprocess.run(["git", *args], cwd=scenario.git.path, env=env, input=text, capture_output=True,
                              text=True, check=True).stdout.strip()

    git("read-tree", tree)
    for path, content in files.items():
        git("update-index", "--add", "--cacheinfo", f"100644,{git('hash-object', '-w', '--stdin', text=content)},{path}")
    return git("-c", "user.name=GitHub", "-c", "user.email=noreply@github.com", "commit-tree", git("write-tree"),
               "-p", scenario.base_sha, "-p", head, "-m", "test merge")


def _both_append(scenario: Scenario) -> str:
    """The verdict file merges as a union (`.gitattributes`), main appends a line to it and the PR
    appends Y's: git merges the tip's lines, then the PR's, the record the gate reviewed."""
    base = commit_on_main(scenario, {".gitattributes": f"{VERDICTS} merge=union\n"}, "verdicts merge as a union")
    scenario.git("reset", "-q", "--hard", base)
    commit_on_main(scenario, {VERDICTS: verdicts_jsonl(TEXTS) + verdict_line("C", "R5", "yes")}, "main re-records C on R5")
    pr_text = rubric_yaml(["A", "B", "C", "D"]).replace("- id: C\n", f"- id: Y\n  text: {Y}\n- id: C\n")
    return scenario.git.commit({RUBRIC: pr_text, VERDICTS: verdicts_jsonl(TEXTS) + "".join(
        verdict_line(Y, i, "yes") for i in LABELS)}, "add Y")


@pytest.mark.parametrize("reader", ["git", "rest"])
def test_a_record_both_sides_appended_to_merges_as_reviewed(scenario: Scenario, reader: str) -> None:
    head = _both_append(scenario)
    tree = scenario.git("merge-tree", "--write-tree", scenario.base_sha, head).split()[0]
    assert scenario.git("show", f"{tree}:{VERDICTS}").count(Y) == len(LABELS)  # a clean union merge
    result = run_with_reader(scenario, head, reader)
    assert _merge_findings(result) == [] and result.code == 0, result.stdout + result.stderr


def test_a_test_merge_whose_record_reads_otherwise_fails(scenario: Scenario) -> None:
    head = _both_append(scenario)
    tree = scenario.git("merge-tree", "--write-tree", scenario.base_sha, head).split()[0]
    record = scenario.git("show", f"{tree}:{VERDICTS}") + "\n"
    flipped = record.replace(verdict_line("B", "R2", "no"), verdict_line("B", "R2", "yes"))
    assert flipped != record
    scenario.fake.test_merge_sha = _crafted_merge(scenario, head, {VERDICTS: flipped})
    result = run_with_reader(scenario, head, "rest")
    assert result.code == 1 and _conclusion(scenario, head) == "failure", result.stdout + result.stderr
    (finding,) = _merge_findings(result)
    assert (finding["file"], finding["kind"], finding["blocking"]) == (VERDICTS, "merge.differs", True), finding
    assert "record" in finding["message"]  # the record as lookups read it, not the file's bytes


@pytest.mark.parametrize("path, edit", [
    (CALIBRATION, lambda text: text.replace('"label": "fail"', '"label": "pass"', 1)),  # the tip's, relabeled
    (VERDICTS, lambda text: text.replace('"answer": "no"', '"answer": "yes"', 1)),  # the head's, flipped
])
def test_a_test_merge_with_a_file_other_than_the_gate_read_fails(scenario: Scenario, path: str, edit) -> None:
    commit_on_main(scenario, {"README.md": "main moved on\n"}, "main edits the README")
    lines = "".join(verdict_line(Y, i, "yes") for i in LABELS)
    head = scenario.git.commit({RUBRIC: rubric_yaml(["A", "B", "C", "D"]).replace(
        "- id: D\n", f"- id: Y\n  text: {Y}\n- id: D\n"), VERDICTS: verdicts_jsonl(TEXTS) + lines}, "add Y")
    text = scenario.git("show", f"{head}:{path}") + "\n"
    scenario.fake.test_merge_sha = _crafted_merge(scenario, head, {path: edit(text)})
    result = run_with_reader(scenario, head, "rest")
    assert result.code == 1 and _conclusion(scenario, head) == "failure", result.stdout + result.stderr
    (finding,) = _merge_findings(result)
    side = "the head" if path == VERDICTS else "the base tip"
    assert finding["file"] == path and f"other than the gate read it (as {side} has it)" in finding["message"]
