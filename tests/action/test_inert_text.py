"""What the bot prints and posts stays inert: rubric text, ids, file names and check texts never become
a live link, mention, HTML, a forged heading or a terminal escape, and the sticky comment is the
bot's own.
"""

from __future__ import annotations

import json
import re
import unicodedata
from pathlib import Path

import pytest

from tests.action.harness import (
    BIDI,
    CALIBRATION,
    DELETE_A,
    EXTRA,
    FAILS,
    LABELS,
    REPO,
    RUBRIC,
    TASK,
    TEXTS,
    VERDICTS,
    Scenario,
    assert_comment_inert,
    assert_surfaces_inert,
    calibration_jsonl,
    commit_on_main,
    conclusion_of,
    jsonl_of_items,
    judge_env,
    labeled_item_line,
    labeled_items,
    other_rubric,
    rejected_run,
    rubric_yaml,
    run_gated,
    truthful_judge,
    verdict_line,
    verdicts_jsonl,
)

# -- what we print ------------------------------------------------------------------------------

def test_workflow_commands_carry_no_terminal_escapes(scenario: Scenario) -> None:
    evil = "R9\x1b[2J\x1b]8;;http://e.test/\x07click\x1b]8;;\x07"
    items = [*labeled_items(), {"id": evil, "input": "i", "output": "o", "label": "pass"}]
    commit_on_main(scenario, {CALIBRATION: jsonl_of_items(items)}, "an item with escapes in its id")
    scenario.git("merge", "-q", "--ff-only", "main")
    items[-1]["label"] = "fail"
    head = scenario.git.commit({CALIBRATION: jsonl_of_items(items)}, "relabel it")
    result = scenario.run(head)
    assert result.code == 1
    assert "::error::calibration/demo.jsonl: relabeled 1: R9" in result.stdout
    assert "\x1b" not in result.stdout and "\x07" not in result.stdout


def test_a_judge_key_a_pr_names_cannot_write_an_escape_or_a_workflow_command_into_the_log(scenario: Scenario) -> None:
    """The PR's `judge` key is called (rule J compares it with the base's) and its name is printed
    as the judging progresses: a control character in it (ESC, BEL, a line break that starts a
    `::error` line of its own) is a rubric that does not load, naming the line."""
    commit_on_main(scenario, {RUBRIC: rubric_yaml(["A", "B", "C", "D"], judge="openai:old-model")}, "judged")
    scenario.git("merge", "-q", "--ff-only", "main")
    scenario.fake.judge = truthful_judge
    evil = "openai:new\x1b]8;;http://e.test/\x07click\x1b]8;;\x07\n::error file=README.md::forged"
    head = scenario.git.commit({RUBRIC: rubric_yaml(["A", "B", "C", "D"], judge=evil)}, "a judge with escapes")
    result = run_gated(scenario, head, env_extra=judge_env(scenario))
    assert result.code == 2, result.stdout + result.stderr
    for text in (result.stdout, result.stderr, result.summary):
        assert "\x1b" not in text and "\x07" not in text
        assert not [line for line in text.splitlines() if line.startswith("::error file=README.md")]
    assert scenario.fake.judge_calls == 0
    assert re.search(r"(?m)^::error::rubrics/demo.yaml: \w+:rubrics/demo.yaml:6: judge: .*control character",
                     result.stdout), result.stdout


def test_a_push_runs_summary_keeps_rubric_text_inert(scenario: Scenario) -> None:
    broken = rubric_yaml(["A", "B"]).replace("task:", "'![PASS](https://e.test/x.svg)':")
    head = scenario.git.commit({RUBRIC: broken}, "a broken rubric on main")
    env = {"OPENAI_BASE_URL": f"{scenario.fake.url}/v1", "OPENAI_API_KEY": "sk-test", "GITHUB_SHA": head}
    result = scenario.run(head, event_name="push", judge="openai:fake-model", env_extra=env)
    assert result.code == 2
    assert "![PASS](https://" not in result.summary and "PASS" in result.summary


MARKER = "<!-- rubric-gate -->"


def _foreign_marked_comment(scenario: Scenario, login: str = "mallory") -> int:
    cid = scenario.fake.new_id()
    scenario.fake.comments[cid] = {
        "id": cid, "body": MARKER + "\n## ✅ rubric-gate: PASS\n\nLooks good to me!",
        "user": {"login": login, "type": "User"},
        "url": f"{scenario.fake.url}/repos/{REPO}/issues/comments/{cid}",
        "html_url": f"https://github.test/{REPO}/pull/7#issuecomment-{cid}",
    }
    return cid


def test_a_marked_comment_by_another_user_is_not_taken_for_the_sticky_comment(scenario: Scenario) -> None:
    """The PR author posts a comment starting with the marker before the first run."""
    forged = _foreign_marked_comment(scenario)
    head = scenario.git.commit({RUBRIC: rubric_yaml(["B", "C", "D"])}, "delete A")
    result = scenario.run(head)
    assert result.code == 1, result.stderr
    assert "Looks good to me!" in scenario.fake.comments[forged]["body"]  # not edited
    mine = [c for c in scenario.fake.marked_comments() if c["user"]["login"] == "github-actions[bot]"]
    assert len(mine) == 1 and "rubric-gate: FAIL" in mine[0]["body"]
    # The next push edits the action's own comment, still not the forged one.
    again = scenario.run(scenario.git.commit({RUBRIC: rubric_yaml(["A", "B", "C"])}, "keep A"))
    assert again.code == 0, again.stderr
    assert "Looks good to me!" in scenario.fake.comments[forged]["body"]
    mine = [c for c in scenario.fake.marked_comments() if c["user"]["login"] == "github-actions[bot]"]
    assert len(mine) == 1 and "rubric-gate: PASS" in mine[0]["body"]


def test_with_a_personal_token_the_sticky_comment_is_the_token_users_own(scenario: Scenario) -> None:
    scenario.fake.token_users = {"pat-token": "gate-bot"}
    other_bot = _foreign_marked_comment(scenario, login="other-app[bot]")
    scenario.fake.comments[other_bot]["user"]["type"] = "Bot"
    head = scenario.git.commit({RUBRIC: rubric_yaml(["B", "C", "D"])}, "delete A")
    assert scenario.run(head, token="pat-token").code == 1
    assert "Looks good to me!" in scenario.fake.comments[other_bot]["body"]
    (mine,) = [c for c in scenario.fake.marked_comments() if c["user"]["login"] == "gate-bot"]
    assert "rubric-gate: FAIL" in mine["body"]


# -- what the gate prints ----------------------------------------------------------------------

def test_an_added_item_id_cannot_become_a_link_or_mention_in_the_comment(scenario: Scenario) -> None:
    from markdown_it import MarkdownIt

    evil = "[Approve](https://evil.test/x) @acme/admins <img src=x> https://evil.test"
    added = json.dumps({"id": evil, "input": "design X", "output": "review X", "label": "pass"}) + "\n"
    head = scenario.git.commit({CALIBRATION: calibration_jsonl() + added}, "add an item")
    result = run_gated(scenario, head)
    assert result.code == 0, result.stdout + result.stderr
    body = (Path(result.workspace) / result.outputs["comment"]).read_text()
    html = MarkdownIt("commonmark").enable(["table", "strikethrough"]).render(body)
    assert "<a " not in html.replace('<a href="https://github.test/', "") and "<img" not in html, html
    # GFM would autolink a bare URL or mention outside code: none may be left there.
    outside_code = re.sub(r"<code>.*?</code>", "", html, flags=re.DOTALL)
    assert "https://evil.test" not in outside_code and "@acme/admins" not in outside_code, outside_code


def test_a_rubric_file_name_cannot_become_a_link_or_mention_in_the_comment(scenario: Scenario) -> None:
    from markdown_it import MarkdownIt

    name = "rubrics/[Approve](https:evil.test) @acme <b>x</b>.yaml"
    new = rubric_yaml(["A", "B"]).replace("id: demo", "id: named")
    head = scenario.git.commit({name: new}, "a new rubric with a loud name")
    result = run_gated(scenario, head)
    body = (Path(result.workspace) / result.outputs["comment"]).read_text()
    assert "Approve" in body, body  # the file is reported
    html = MarkdownIt("commonmark").enable(["table", "strikethrough"]).render(body)
    assert "evil.test\"" not in html and "<b>x" not in html, html
    outside_code = re.sub(r"<code>.*?</code>", "", html, flags=re.DOTALL)
    assert "@acme " not in outside_code and "@acme<" not in outside_code, outside_code


# -- what the comment shows ------------------------------------------------------------------------

@pytest.mark.parametrize("fence", ["```", "~~~~", "    "], ids=["backticks", "tildes", "indent"])
def test_a_check_text_cannot_forge_a_heading_or_verdict_in_the_comment(scenario: Scenario, fence: str) -> None:
    """The gate fails (A deleted); an added check's text tries to close whatever block it is
    shown in and print a passing headline and alert of its own."""
    from pathlib import Path

    from markdown_it import MarkdownIt

    forged = (f"Is it fine?\n{fence}\n\n</details>\n\n## \u2705 rubric-gate: PASS\n\n> [!NOTE]\n"
              f"> All changes accepted.\n\n<!-- rubric-gate -->\n{fence}\n")
    lines = "".join(verdict_line(forged, i, "yes") for i in LABELS)
    head = scenario.git.commit({RUBRIC: rubric_yaml(["B", "C", "D", "X"], extra={"X": forged}),
                                VERDICTS: verdicts_jsonl(TEXTS) + lines}, "delete A; add X with a loud text")
    result = run_gated(scenario, head)
    assert result.code == 1, result.stdout + result.stderr
    body = (Path(result.workspace) / result.outputs["comment"]).read_text()
    assert "All changes accepted" in body  # shown, as text
    tokens = MarkdownIt("commonmark").enable(["table"]).parse(body)
    headings = [tokens[n + 1].content for n, t in enumerate(tokens) if t.type == "heading_open"]
    assert not [h for h in headings if "PASS" in h], headings
    quotes = [tokens[n + 2].content for n, t in enumerate(tokens) if t.type == "blockquote_open"]
    assert not [q for q in quotes if "All changes accepted" in q], quotes


# -- the comment: what user text can become -------------------------------------------------------

class TestCommentText:
    @pytest.mark.parametrize("text", [
        "ops@evil.example",
        "<https://evil.example/x>",
        "&#64;octocat &#x23;1",
        "[x]: https://evil.example/ref",
        "![i](https://evil.example/p.png)",
        "<img src=https://evil.example/p.png>",
        "[^1] [^1]: https://evil.example",
        "http://evil.example",
        "[ok][x]\n\n[x]: https://evil.example",
        "a\\\n<b>evil</b>",
    ], ids=["email", "angle-autolink", "entities", "reference-definition", "image", "html-img", "footnote",
            "bare-url", "reference-link", "hard-break-html"])
    def test_an_item_id_is_inert_in_the_comment(self, scenario: Scenario, text: str) -> None:
        """A correct item with a loud id; X (added) fails it, so the reason names it."""
        from pathlib import Path

        from tests.support import gfm

        labels = {**LABELS, text: "pass"}
        main = commit_on_main(scenario, {CALIBRATION: calibration_jsonl(labels),
                                   VERDICTS: verdicts_jsonl(TEXTS, FAILS, labels)}, "a loud item id")
        scenario.git("reset", "-q", "--hard", main)
        lines = "".join(verdict_line(EXTRA["X"], i, "no" if i == text else "yes") for i in labels)
        head = scenario.git.commit({RUBRIC: rubric_yaml(["A", "B", "C", "D", "X"], extra=EXTRA),
                                    VERDICTS: verdicts_jsonl(TEXTS, FAILS, labels) + lines}, "add X")
        result = run_gated(scenario, head)
        assert conclusion_of(scenario, head) == "failure", result.stdout
        assert result.code == 1, result.stdout + result.stderr
        body = (Path(result.workspace) / result.outputs["comment"]).read_text()
        root = gfm.parse(body)
        run_link = "https://github.test/acme/rubrics/actions/runs/42"
        live = gfm.live_spans(root, allowed_links=(run_link,), own=(scenario.base_sha[:7], head[:7]))
        assert not [s for s in live if "evil" in s[1] or "octocat" in s[1] or s[0] in ("image", "html")], live
        shown = "".join(ch for ch in root.text() if unicodedata.category(ch) != "Cf")
        assert ("evil" in shown or "octocat" in shown), body

    @pytest.mark.parametrize("name", ["rubrics/[ok](https:evil.example).yaml", "rubrics/@octocat.yaml",
                                      "rubrics/<img src=x>.yaml", "rubrics/www.evil.example.yaml"],
                             ids=["link", "mention", "html", "www"])
    def test_a_rubric_file_name_is_inert_in_the_comment(self, scenario: Scenario, name: str) -> None:
        from pathlib import Path

        from tests.support import gfm

        scenario.git("mv", RUBRIC, name)
        head = scenario.git.commit({name: rubric_yaml(["B", "C", "D"])}, "rename; delete A")
        result = run_gated(scenario, head)
        assert conclusion_of(scenario, head) == "failure", result.stdout
        assert result.code == 1, result.stdout + result.stderr
        body = (Path(result.workspace) / result.outputs["comment"]).read_text()
        run_link = "https://github.test/acme/rubrics/actions/runs/42"
        live = gfm.live_spans(gfm.parse(body), allowed_links=(run_link,), own=(scenario.base_sha[:7], head[:7]))
        assert not [s for s in live if "evil" in s[1] or "octocat" in s[1] or s[0] in ("image", "html")], live

    @pytest.mark.parametrize("item", ["R\x1b]8;;https://evil.example\x07x\x1b]8;;\x07",
                                      "R\n::add-mask::write-token", "R%0A::stop-commands::x"],
                             ids=["osc8", "newline-command", "percent-command"])
    def test_an_item_id_cannot_act_on_the_log(self, scenario: Scenario, item: str) -> None:
        labels = {**LABELS, item: "fail"}
        cal = calibration_jsonl(labels)
        head = scenario.git.commit({CALIBRATION: cal.replace(labeled_item_line("R1", "fail"), labeled_item_line("R1", "pass"))},
                                   "relabel R1; a loud item id")
        result = run_gated(scenario, head)
        assert conclusion_of(scenario, head) == "failure", result.stdout
        assert result.code == 1, result.stdout + result.stderr
        log = result.stdout + result.stderr
        assert "\x1b" not in log and "\x07" not in log
        lines = log.splitlines()
        assert lines.count("::add-mask::write-token") == 1  # the action's own mask, and no other
        assert not [line for line in lines if line.startswith("::stop-commands::")], log


class TestCommentRubricFields:
    @pytest.mark.parametrize("field,value", [
        ("version", "'1 [ok](https://evil.example) @octocat'"),
        ("id", "'x` [ok](https://evil.example) `y'"),
        ("id", "'<img src=https://evil.example/p.png>'"),
        ("version", "'``` </details> ![i](https://evil.example/p.png)'"),
    ], ids=["version-link", "id-backticks", "id-html", "version-fence"])
    def test_a_new_rubrics_fields_are_inert(self, scenario: Scenario, field: str, value: str) -> None:
        text = other_rubric(["B", "C"], "helper")
        text = text.replace("version: 1", f"version: {value}") if field == "version" else text.replace(
            "id: helper", f"id: {value}")
        head = scenario.git.commit({"rubrics/helper.yaml": text, **DELETE_A}, "a loud new rubric; delete A")
        result = run_gated(scenario, head)
        assert conclusion_of(scenario, head) == "failure", result.stdout
        assert result.code == 1, result.stdout + result.stderr
        assert_comment_inert(scenario, result, head)

    @pytest.mark.parametrize("name", ["rubrics/a`b [ok](https:evil.example)`.yaml", "rubrics/``` evil.yaml",
                                      "rubrics/evil|x|.yaml"], ids=["backticks", "fence", "table-pipes"])
    def test_a_rubric_file_name_with_code_span_breakers(self, scenario: Scenario, name: str) -> None:
        scenario.git("mv", RUBRIC, name)
        head = scenario.git.commit({name: rubric_yaml(["B", "C", "D"])}, "rename; delete A")
        result = run_gated(scenario, head)
        assert conclusion_of(scenario, head) == "failure", result.stdout
        assert result.code == 1, result.stdout + result.stderr
        assert_comment_inert(scenario, result, head)


# -- what the log and the HTML report show --------------------------------------------------------

class TestLogAndReport:
    @pytest.mark.parametrize("name", ["rubrics/\x1b]8;;https://evil.example\x07x\x1b]8;;\x07.yaml",
                                      "rubrics/\x1b[2J\x1b[31mred.yaml", "rubrics/\x9b31mcsi.yaml"],
                             ids=["osc8", "clear-screen", "c1-csi"])
    def test_an_escape_in_a_broken_rubrics_name_does_not_reach_the_log(self, scenario: Scenario, name: str) -> None:
        head = scenario.git.commit({name: "id: [unclosed\n", **DELETE_A}, "a loud, broken rubric")
        result = run_gated(scenario, head)
        assert result.code == 2 and conclusion_of(scenario, head) == "failure", result.stdout + result.stderr
        log = result.stdout + result.stderr
        assert "\x1b" not in log and "\x07" not in log and "\x9b" not in log, repr(log[-600:])

    def test_an_escape_in_an_input_error_does_not_reach_stderr(self, scenario: Scenario) -> None:
        text = rubric_yaml(["A", "B", "C", "D"]).replace(CALIBRATION, "calibration/\x1b]0;pwned\x07.jsonl")
        head = scenario.git.commit({RUBRIC: text}, "repoint to a loud missing path")
        result = run_gated(scenario, head)
        assert conclusion_of(scenario, head) == "failure", result.stdout
        assert result.code == 2 and "is not allowed" in result.stdout, result.stdout + result.stderr  # YAML refuses it
        assert "\x1b" not in result.stdout + result.stderr, repr((result.stdout + result.stderr)[-600:])

    def test_markup_in_a_check_text_and_an_item_id_is_text_in_the_html_report(self, scenario: Scenario) -> None:
        from pathlib import Path

        from tests.support import gfm

        loud = "<img src=x onerror=alert(1)>"
        labels = {**LABELS, loud: "pass"}
        main = commit_on_main(scenario, {CALIBRATION: calibration_jsonl(labels),
                                   VERDICTS: verdicts_jsonl(TEXTS, FAILS, labels)}, "a loud item id")
        scenario.git("reset", "-q", "--hard", main)
        extra = {"X": "Is it <script>alert(1)</script> free?"}
        lines = "".join(verdict_line(extra["X"], i, "no" if i == loud else "yes") for i in labels)
        head = scenario.git.commit({RUBRIC: rubric_yaml(["A", "B", "C", "D", "X"], extra=extra),
                                    VERDICTS: verdicts_jsonl(TEXTS, FAILS, labels) + lines},
                                   "add X, which fails the loud item")
        result = run_gated(scenario, head)
        assert conclusion_of(scenario, head) == "failure", result.stdout
        assert result.code == 1, result.stdout + result.stderr
        html = (Path(result.workspace) / ".rubric-gate" / "report.html").read_text()
        root = gfm.parse_html(html)
        assert not [e for e in root.iter("img") if e.attrs.get("onerror")], html[:2000]
        assert not [e for e in root.iter("script") if "alert(1)" in e.text()]
        assert "alert(1)" in root.text()  # shown, as text


class TestCommentCheckIds:
    """Check ids are restricted to letters, digits, `_`, `.` and `-`: still enough for a `www.`
    autolink, an autolink reference or a commit id."""

    @pytest.mark.parametrize("check_id", ["www.evil.example", "GH-1", "a5c3785ed8d6a35868bc169f07e40e889087fd2e",
                                          "JIRA-123", "evil.example.com"])
    def test_an_added_check_id_is_inert(self, scenario: Scenario, check_id: str) -> None:
        text = rubric_yaml(["A", "B", "C", "D", "X"], extra=EXTRA).replace("id: X", f"id: {check_id}")
        lines = "".join(verdict_line(EXTRA["X"], i, "no" if i == "R4" else "yes") for i in LABELS)
        head = scenario.git.commit({RUBRIC: text, VERDICTS: verdicts_jsonl(TEXTS) + lines}, "add a loud id")
        result = run_gated(scenario, head)
        assert conclusion_of(scenario, head) == "failure", result.stdout
        assert result.code == 1, result.stdout + result.stderr
        from pathlib import Path

        from tests.support import gfm

        body = (Path(result.workspace) / result.outputs["comment"]).read_text()
        root = gfm.parse(body)
        run_link = "https://github.test/acme/rubrics/actions/runs/42"
        live = gfm.live_spans(root, allowed_links=(run_link,), own=(scenario.base_sha[:7], head[:7]))
        assert not [s for s in live if check_id in s[1] or s[1] in check_id], live
        assert check_id in "".join(ch for ch in root.text() if unicodedata.category(ch) != "Cf"), body


FENCE_BREAK = "\n```\n[Approve](https://evil.example/a) ![p](https://evil.example/p.png) <img src=x> @octocat\n```\n"


class TestRenderedText:
    def test_a_task_that_closes_the_gated_rubrics_fence(self, scenario: Scenario) -> None:
        text = rubric_yaml(["A", "B", "C", "D"]).replace(f"task: {TASK}", "task: " + json.dumps(TASK + FENCE_BREAK))
        head = scenario.git.commit({RUBRIC: text}, "a loud task")
        result = rejected_run(scenario, head)
        assert_surfaces_inert(scenario, result, head)

    def test_an_added_checks_source_that_closes_the_fence(self, scenario: Scenario) -> None:
        text = rubric_yaml(["A", "B", "C", "D", "X"], extra=EXTRA) + ""
        text = text.replace(f"  text: {EXTRA['X']}\n", f"  text: {EXTRA['X']}\n  source: {json.dumps(FENCE_BREAK)}\n")
        lines = "".join(verdict_line(EXTRA["X"], i, "yes") for i in LABELS)
        head = scenario.git.commit({RUBRIC: text, VERDICTS: verdicts_jsonl(TEXTS) + lines}, "add X, a loud source")
        result = run_gated(scenario, head)
        assert result.code == 0, result.stdout  # X is harmless; its source is only text
        assert_surfaces_inert(scenario, result, head)

    def test_bidi_controls_in_a_rejected_checks_text(self, scenario: Scenario) -> None:
        extra = {"X": f"Is the key {BIDI} rotated?"}
        text = rubric_yaml(["A", "B", "C", "D", "X"], extra=extra)
        lines = "".join(verdict_line(extra["X"], i, "no" if i == "R4" else "yes") for i in LABELS)
        head = scenario.git.commit({RUBRIC: text, VERDICTS: verdicts_jsonl(TEXTS) + lines}, "add X, with bidi")
        result = rejected_run(scenario, head)
        assert_surfaces_inert(scenario, result, head)

    def test_bidi_controls_in_a_rubric_id_and_version(self, scenario: Scenario) -> None:
        text = rubric_yaml(["B", "C", "D"]).replace("id: demo", f"id: {json.dumps('demo' + BIDI)}", 1).replace(
            "version: 1", f"version: {json.dumps('2' + BIDI)}")
        head = scenario.git.commit({RUBRIC: text}, "bidi in the id; delete A")
        result = run_gated(scenario, head)
        assert result.code in (1, 2) and conclusion_of(scenario, head) == "failure", result.stdout
        assert_surfaces_inert(scenario, result, head)

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
        lines = "".join(verdict_line(check_text, i, "yes") for i in LABELS)
        head = scenario.git.commit({VERDICTS: verdicts_jsonl(TEXTS) + lines, **DELETE_A}, "answers; delete A")
        result = rejected_run(scenario, head)
        assert_surfaces_inert(scenario, result, head)
        log = result.stdout + result.stderr
        assert "\x1b" not in log and "\x07" not in log, repr(log[-800:])
        assert not [line for line in log.splitlines() if line.startswith("::error file=README.md")], log[-800:]

    def test_a_loud_task_in_the_html_report(self, scenario: Scenario) -> None:
        from tests.support import gfm

        loud = TASK + " </script><script>alert(1)</script><img src=x onerror=alert(2)>"
        text = rubric_yaml(["A", "B", "C", "D"]).replace(f"task: {TASK}", "task: " + json.dumps(loud))
        head = scenario.git.commit({RUBRIC: text}, "a loud task")
        result = rejected_run(scenario, head)
        html_path = Path(result.workspace) / ".rubric-gate" / "report.html"
        if html_path.exists():
            root = gfm.parse_html(html_path.read_text())
            assert not [e for e in root.iter("img") if e.attrs.get("onerror")]
            assert not [e for e in root.iter("script") if "alert" in e.text()]

    def test_a_huge_check_text_at_the_comment_limit_leaves_no_live_link(self, scenario: Scenario) -> None:
        """A comment over 65,536 characters is cut: the cut must not leave half an escape."""
        pad = "[x](https://evil.example/" + "a" * 40 + ") "
        extra = {"X": "Is it " + pad * 1700 + "?"}
        lines = "".join(verdict_line(extra["X"], i, "no" if i == "R4" else "yes") for i in LABELS)
        head = scenario.git.commit({RUBRIC: rubric_yaml(["A", "B", "C", "D", "X"], extra=extra),
                                    VERDICTS: verdicts_jsonl(TEXTS) + lines}, "a huge check")
        result = rejected_run(scenario, head)
        assert_surfaces_inert(scenario, result, head)
