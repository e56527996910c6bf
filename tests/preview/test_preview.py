"""`rubric-gate preview`: the action's gate on a local repository, compared with the action itself.

The same repository (a PR branch behind main, a renamed rubric, a second rubric) is gated by
the action through PyGithub against the fake GitHub and by the preview with no server at all:
the comment must be the same but for the workflow-run link, so the preview cannot drift.
"""

from __future__ import annotations

import contextlib
import io
import os
import shutil
import subprocess
import sys
from pathlib import Path
from unittest import mock

import pytest

from tests.action.harness import (
    CALIBRATION,
    FAILS,
    LABELS,
    RUBRIC,
    TEXTS,
    VERDICTS,
    Scenario,
    calibration_jsonl,
    commit_on_main,
    rubric_yaml,
    verdicts_jsonl,
)
from tests.support import gfm

UNREACHABLE = "http://127.0.0.1:9"  # the discard port: any connection attempt fails


def preview(workspace: Path, *args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    from rubric_gate.cli.main import main

    out, err = io.StringIO(), io.StringIO()
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "INPUT_"))}
    # No GitHub: any API call would go to a closed port and fail the test.
    with (mock.patch.dict(os.environ, {**clean, "GITHUB_API_URL": UNREACHABLE, **(env or {})}, clear=True),
          contextlib.chdir(workspace), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err)):
        code = main(["preview", *args])
    return code, out.getvalue(), err.getvalue()


def _without_run_link(body: str) -> str:
    return body.replace(" · [workflow run](https://github.test/acme/rubrics/actions/runs/42)", "")


def _behind_main_with_rename(scenario: Scenario) -> str:
    """main moves on after the PR branched; the PR renames the rubric, deletes D, adds E, and
    adds a second rubric. Returns the PR head."""
    git = scenario.git
    git("checkout", "-q", "main")
    tip = git.commit({"README.md": "main moved on\n"}, "main moves")
    scenario.base_sha = scenario.fake.base_sha = tip
    git("checkout", "-q", "pr")
    texts = {**TEXTS}
    return git.commit({
        RUBRIC: None,
        "rubrics/renamed.yaml": rubric_yaml(["A", "B", "C", "E"]),
        "rubrics/second.yaml": rubric_yaml(["A", "B"]).replace("id: demo", "id: second"),
        VERDICTS: verdicts_jsonl(texts),
    }, "rename, edit, add")


def test_preview_posts_nothing_and_prints_the_comment_the_action_posts(scenario: Scenario) -> None:
    head = _behind_main_with_rename(scenario)
    action = scenario.run(head)
    posted = scenario.fake.marked_comments()[0]["body"]
    writes = len(scenario.fake.writes())

    code, out, err = preview(scenario.git.path, "--base", "main", "--head", "pr")

    assert code == action.code == 1, err
    assert out == _without_run_link(posted)
    assert len(scenario.fake.writes()) == writes  # the preview wrote nothing to GitHub
    merge_base = scenario.git("merge-base", "main", "pr")
    assert f"gated against their merge base {merge_base[:7]}" in err
    assert err.rstrip().splitlines()[-1].startswith("rubric-gate preview: fail: the action would exit 1 (gate failed)")
    written = scenario.git.path / ".rubric-gate" / "preview"
    assert (written / "comment.md").read_text() == out
    assert "<svg" in (written / "report.html").read_text()
    # Rendered as GitHub does: one list item per rejected change, one heading saying FAIL.
    root = gfm.parse(out)
    headings = [e.text() for e in gfm.top_level(root) if e.tag in ("h2", "h3")]
    assert sum("FAIL" in h for h in headings) == 1
    # The preview's files are ignored by git: `git add -A` cannot commit them into the PR.
    assert scenario.git("status", "--porcelain") == ""


def test_preview_of_a_passing_branch_exits_0(scenario: Scenario) -> None:
    head = scenario.git.commit({RUBRIC: rubric_yaml(["A", "B", "C", "D"]).replace("version: 1", "version: 2")})
    code, out, err = preview(scenario.git.path, "--base", "main")
    assert code == 0, err
    assert out.startswith("<!-- rubric-gate -->\n## ✅ rubric-gate: PASS") and head[:7] in out


def test_offline_by_default_a_rubric_judge_and_a_key_make_no_call(scenario: Scenario) -> None:
    # The base rubric names a judge and a key is set: the action would judge; the preview
    # replays (the judge's API is a closed port, so a call would fail the run) and says so.
    git = scenario.git
    git("checkout", "-q", "main")
    base = git.commit({RUBRIC: rubric_yaml(["A", "B", "C", "D"], judge="anthropic:claude-sonnet-4-6")})
    git("checkout", "-q", "-B", "pr", base)
    git.commit({RUBRIC: rubric_yaml(["A", "B", "C"], judge="anthropic:claude-sonnet-4-6")})
    code, out, err = preview(git.path, env={"ANTHROPIC_API_KEY": "sk-test", "ANTHROPIC_BASE_URL": UNREACHABLE})
    assert code == 0, err  # D's catch of R3 is shared with B and C: its deletion is accepted
    assert "offline: no judge was called, recorded verdicts were replayed" in err
    assert "sk-test" not in out + err


def test_workflow_inputs_are_read_and_expressions_left_to_the_runner(scenario: Scenario) -> None:
    workflow = ("jobs:\n  gate:\n    steps:\n      - uses: actions/checkout@v4\n"
                "      - uses: acme/rubric-gate@v1\n        with:\n          fail_on: never\n"
                "          judge: openai:gpt-4o-mini\n          github_token: ${{ secrets.X }}\n"
                "          rates_rule: ${{ vars.STRICT }}\n")
    scenario.git.commit({".github/workflows/rubric-gate.yml": workflow,
                         RUBRIC: rubric_yaml(["B", "C", "D"])}, "delete A (the unique catch of R1)")
    code, out, err = preview(scenario.git.path)
    assert code == 0, err  # fail_on: never, from the workflow
    assert "inputs from .github/workflows/rubric-gate.yml" in err
    assert "the workflow's judge `openai:gpt-4o-mini` was not called" in err
    assert "sets rates_rule by an expression only a runner evaluates" in err
    assert "FAIL" in out  # the gate still failed; the workflow only keeps the job green


@pytest.mark.parametrize(("args", "message"), [
    (("--base", "nope"), "rubric-gate: error: --base nope: no such branch or commit in this repository (the "
                         "branch your PR will target; branches here: main, pr)"),
    (("--head", "nope"), "rubric-gate: error: --head nope: no such branch or commit in this repository"),
])
def test_a_ref_that_does_not_exist_is_one_line_and_exit_2(scenario: Scenario, args: tuple[str, ...],
                                                           message: str) -> None:
    code, out, err = preview(scenario.git.path, *args)
    assert (code, out) == (2, "")
    assert err.startswith(message) and len(err.splitlines()) == 1


def test_outside_a_repository_and_over_tracked_files(scenario: Scenario, tmp_path: Path) -> None:
    alone = tmp_path / "alone"
    alone.mkdir()
    code, _, err = preview(alone)
    assert code == 2 and "not a git repository" in err and len(err.splitlines()) == 1
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=alone, check=True)
    code, _, err = preview(alone)
    assert code == 2 and "this repository has no commits yet: commit your rubric" in err
    scenario.git.commit({"kept/report.json": "mine\n"})
    code, _, err = preview(scenario.git.path, "--out", "kept")
    assert code == 2 and "holds files the repository tracks (kept/report.json)" in err
    assert (scenario.git.path / "kept" / "report.json").read_text() == "mine\n"


def test_uncommitted_edits_are_named_not_gated(scenario: Scenario) -> None:
    (scenario.git.path / RUBRIC).write_text(rubric_yaml(["A"]), encoding="utf-8")
    code, out, err = preview(scenario.git.path)
    assert code == 0, err  # HEAD equals main: nothing to gate
    assert f"uncommitted changes are not gated ({RUBRIC})" in err
    assert "This PR changes no rubric file" in out


def test_the_console_script_runs_it(scenario: Scenario) -> None:
    scenario.git.commit({"notes.md": "no rubric change\n"})
    proc = subprocess.run([sys.executable, "-m", "rubric_gate", "preview"], cwd=scenario.git.path, capture_output=True,
                          text=True, check=False, env={**os.environ, "GITHUB_API_URL": UNREACHABLE})
    assert proc.returncode == 0, proc.stderr
    assert "## ✅ rubric-gate: PASS" in proc.stdout


def test_with_judge_it_judges_as_the_action_does_and_posts_the_same_comment(scenario: Scenario) -> None:
    new_text = {"F": "Is the threat model attached?"}
    truth = {**FAILS, "R4": FAILS["R4"] | {"F"}}  # the judge: F fails a correct item

    def judge(prompt: str) -> str:
        check = next(cid for cid, text in {**TEXTS, **new_text}.items() if text in prompt)
        item = next(i for i in LABELS if f"review {i}" in prompt)
        return "no" if check in truth[item] else "yes"

    scenario.fake.judge = judge
    head = scenario.git.commit({RUBRIC: rubric_yaml(["A", "B", "C", "D", "F"], extra=new_text)}, "add F")
    keys = {"OPENAI_BASE_URL": f"{scenario.fake.url}/v1", "OPENAI_API_KEY": "sk-test-secret"}
    # Without a judge F has no verdicts: the preview stops as the action would (exit 2).
    code, out, err = preview(scenario.git.path, env=keys)
    assert code == 2 and "could not be gated" in out and "no verdict for checks F (5/5 items)" in out
    assert scenario.fake.judge_calls == 0

    action = scenario.run(head, judge="openai:fake-model", env_extra=keys)
    assert action.code == 1 and scenario.fake.judge_calls == 25  # 5 check texts x 5 items
    shutil.rmtree(scenario.git.path / ".rubric-gate" / "cache")  # the runner's cache is not on a laptop

    code, out, err = preview(scenario.git.path, "--judge", "openai:fake-model", env=keys)
    assert code == 1, err
    assert scenario.fake.judge_calls == 50 and "offline" not in err
    assert out == _without_run_link(scenario.fake.marked_comments()[0]["body"])
    # Judged verdicts are kept in the local cache: a rerun makes no call.
    assert preview(scenario.git.path, "--judge", "openai:fake-model", env=keys)[0] == 1
    assert scenario.fake.judge_calls == 50


def test_from_a_subdirectory_the_default_out_is_at_the_root_and_out_is_where_typed(scenario: Scenario) -> None:
    sub = scenario.git.path / "rubrics"
    assert preview(sub)[0] == 0
    assert (scenario.git.path / ".rubric-gate" / "preview" / "comment.md").is_file()
    assert preview(sub, "--out", "here")[0] == 0
    assert (sub / "here" / "comment.md").is_file()


def _html(scenario: Scenario) -> gfm.Element:
    return gfm.parse_html((scenario.git.path / ".rubric-gate" / "preview" / "report.html").read_text())


def test_the_html_report_fails_with_the_run_when_the_labels_fail_it(scenario: Scenario) -> None:
    # report.html decides as the run does: where the rubric's own edit passes but a relabeled item
    # fails the run, it must not say "rubric-gate: PASS".

    scenario.git.commit({RUBRIC: rubric_yaml(["A", "B", "C"]), CALIBRATION: calibration_jsonl({**LABELS, "R4": "fail"})},
                        "delete D, relabel R4")
    code, _, err = preview(scenario.git.path, "--base", "main")
    assert code == 1, err
    root = _html(scenario)
    assert next(root.iter("h1")).text() == "rubric-gate: FAIL"
    (failure,) = next(root.iter("ul")).find_all("li")
    assert failure.text().startswith(f"{CALIBRATION}: relabeled 1: R4")
    assert next(root.iter("h2")).text().startswith("✅")  # the rubric itself passed


def test_the_html_report_marks_a_rubric_that_fails_merged_onto_the_tip(scenario: Scenario) -> None:
    git = scenario.git
    git("checkout", "-q", "main")
    git.commit({RUBRIC: rubric_yaml(["A", "D"])}, "main: drop B and C")  # D alone catches R3 there
    git("checkout", "-q", "pr")
    git.commit({RUBRIC: rubric_yaml(["A", "B", "C"])}, "delete D")
    code, _, err = preview(git.path, "--base", "main")
    assert code == 1, err
    root = _html(scenario)
    assert next(root.iter("h1")).text() == "rubric-gate: FAIL"
    assert next(root.iter("h2")).text().startswith("❌")
    assert any(p.text().startswith("Fails: merged onto the base branch's tip") for p in root.iter("p"))


def test_the_merge_git_makes_is_checked_as_the_action_checks_it(scenario: Scenario) -> None:
    """main and the PR each define the YAML anchor `&tb`: both load, and git merges them cleanly
    into a rubric that does not (a duplicate anchor). The preview gates the same merge as the
    action (`gate_changes`), so it fails there too, naming the file."""

    base_text = rubric_yaml(["A", "B", "C", "D"])
    tb = f"  text: {TEXTS['B']}\n"
    commit_on_main(scenario, {RUBRIC: base_text.replace(tb, f"  text: &tb {TEXTS['B']}\n")
                        + "- id: Z\n  text: *tb\n  origin: label\n"}, "main: Z, B's text by alias")
    lenient = "Is the design written in English?"
    scenario.git.commit({RUBRIC: base_text.replace("- id: D\n", f"- id: Y\n  text: &tb {lenient}\n- id: D\n"),
                         VERDICTS: verdicts_jsonl({**TEXTS, "Y": lenient})}, "add Y")
    code, out, err = preview(scenario.git.path, "--base", "main")
    assert code == 1, out + err
    assert "duplicate anchor" in out, out
    assert f"- ❌ `{RUBRIC}`: git's merge of the head" in out, out  # in the comment, no empty "used by"


def test_at_80_columns_the_notes_on_stderr_wrap_between_words_under_their_prefix(scenario: Scenario) -> None:
    # In an 80-column terminal each note wraps between words under its prefix, not mid-word
    # ("recorded ve" / "rdicts") and back at column 0.
    _behind_main_with_rename(scenario)
    code, _, err = preview(scenario.git.path, "--base", "main", "--head", "pr", env={"COLUMNS": "80"})
    assert code == 1, err
    lines = err.rstrip("\n").splitlines()
    assert max(len(line) for line in lines) < 80
    assert all(line.startswith(("rubric-gate preview: ", "  ")) for line in lines), lines
    words = " ".join(line.strip() for line in lines).split()
    assert "recorded" in words and "verdicts" in words and ".rubric-gate/preview/comment.md," in words
    _, _, piped = preview(scenario.git.path, "--base", "main", "--head", "pr")
    assert " ".join(piped.split()) == " ".join(err.split())  # the same words, whole lines when not a terminal


def test_a_workflow_still_running_the_placeholder_action_is_warned_about_by_line(scenario: Scenario) -> None:
    from rubric_gate.scaffold import workflow_template

    workflow = workflow_template()  # what `init` writes before it is told your copy
    line = next(i + 1 for i, text in enumerate(workflow.splitlines()) if "uses: OWNER/rubric-gate@v1" in text)
    scenario.git.commit({".github/workflows/rubric-gate.yml": workflow}, "init")
    code, _, err = preview(scenario.git.path)
    assert code == 0, err
    warning = f"rubric-gate preview: warning: .github/workflows/rubric-gate.yml:{line} runs `OWNER/rubric-gate@v1`"
    assert warning in err.replace("\n", " ") and "rubric-gate init --action you/rubric-gate@<commit" in err
    scenario.git.commit({".github/workflows/rubric-gate.yml": workflow_template("acme/rubric-gate@" + "a" * 40)})
    code, _, err = preview(scenario.git.path)
    assert code == 0 and "placeholder" not in err, err



def test_what_preview_prints_on_stderr_carries_no_terminal_escape(scenario: Scenario) -> None:
    """A branch's file names reach preview's lines (here a workflow still running the placeholder,
    named with an escape sequence): printed inert, as every other line of the CLI is."""
    from rubric_gate.scaffold import workflow_template

    scenario.git.commit({".github/workflows/\x1b[2J\x1b[31m\x07gate.yml": workflow_template()}, "init")
    code, _, err = preview(scenario.git.path)
    assert code == 0, err
    assert "placeholder" in err and "\x1b" not in err and "\x07" not in err, repr(err)

def test_a_judge_without_a_valid_answer_is_named_as_such_not_bad_input(scenario: Scenario) -> None:
    scenario.fake.judge = lambda prompt: "maybe"  # never one of yes, no, n/a
    new_text = {"F": "Is the threat model attached?"}
    scenario.git.commit({RUBRIC: rubric_yaml(["A", "B", "C", "D", "F"], extra=new_text)}, "add F")
    keys = {"OPENAI_BASE_URL": f"{scenario.fake.url}/v1", "OPENAI_API_KEY": "sk-test-secret"}
    code, out, err = preview(scenario.git.path, "--judge", "openai:fake-model", env=keys)
    last = err.strip().splitlines()[-1]
    assert code == 2 and "could not be gated" in out and "failed to parse the same way" in out
    assert "the action would exit 2 (a judge left pairs without a valid answer, none guessed)" in last
    assert "bad input" not in last
