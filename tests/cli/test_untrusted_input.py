"""Untrusted input: odd YAML, odd JSON, odd git specs, a closed stdout, and user text that must stay inert.

Every bad input exits 2 with one line naming the file (and line where there is one), no
traceback, and no input file changes; good input keeps giving the documented results.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
import yaml

from tests.cli.test_bad_input import assert_one_line_error
from tests.support.project import BASE_YAML, Project

RUBRIC = "rubrics/demo.yaml"
CALIBRATION = "calibration/demo.jsonl"
VERDICTS = "calibration/demo.verdicts.jsonl"
HEADER = BASE_YAML.split("checks:\n")[0]


def _bomb() -> str:
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]" for i in range(1, 9)]
    return "\n".join(lines) + "\n"


YAML_CASES = [
    pytest.param(HEADER.replace("version: 1\n", "version: 1\n<<: 5\n"), 3,
                 "merge key '<<' needs a mapping", id="bad-merge-key"),
    pytest.param(HEADER.replace("id: demo", "id: !custom demo"), 1, "YAML tag '!custom' is not allowed", id="unknown-tag"),
    pytest.param(HEADER.replace("id: demo", "id: !!python/object:os.system demo"), 1,
                 "YAML tag '!!python/object:os.system' is not allowed", id="python-tag"),
    pytest.param(HEADER.replace("version: 1", "version: !!int one"), 2, "YAML tag '!!int' is not allowed", id="bad-int-tag"),
    pytest.param(HEADER + "checks: &c\n  - *c\n", 6, "recursive alias", id="recursive-alias"),
    pytest.param(HEADER + "x: &m\n  <<: *m\n", 7, "recursive alias", id="recursive-merge"),
    pytest.param(_bomb(), 1, "document too large", id="alias-bomb"),
    pytest.param(HEADER.replace("version: 1\n", "version: 1\nnull: 2\n"), 3, "mapping keys must be strings, got null",
                 id="null-key"),
    pytest.param(HEADER.replace("version: 1\n", "version: 1\n5: 2\n"), 3, "mapping keys must be strings, got 5",
                 id="int-key"),
    pytest.param(BASE_YAML.replace("version: 1", "version: null"), 2, "version must be a string or a number",
                 id="version-null"),
    pytest.param(BASE_YAML.replace("version: 1", "version: true"), 2, "version must be a string or a number",
                 id="version-bool"),
    pytest.param(BASE_YAML.replace("checks:\n", "aggregation: {max_failures: true}\nchecks:\n"), 6,
                 "aggregation must be 'all-pass' or {max_failures: K}", id="max-failures-bool"),
    pytest.param(BASE_YAML.replace("checks:\n", "aggregation: {max_failures: '1'}\nchecks:\n"), 6,
                 "aggregation must be 'all-pass' or {max_failures: K}", id="max-failures-string"),
    pytest.param(BASE_YAML.replace("source: [R1]", "source: 5"), 10,
                 "checks.0.source: must be a string or a list of strings", id="source-number"),
]


@pytest.mark.parametrize(("text", "line", "fragment"), YAML_CASES)
def test_hostile_yaml_is_one_line_error(project: Project, text: str, line: int, fragment: str) -> None:
    project.write(RUBRIC, text)
    proc = project.run("check", "--base", "HEAD:" + RUBRIC, "--head", RUBRIC)
    assert_one_line_error(proc, f"{RUBRIC}:{line}:", fragment)
    assert ".str:" not in proc.stderr and "list[str]" not in proc.stderr
    assert (project.root / RUBRIC).read_text() == text


def test_control_character_in_yaml_is_one_line_error(project: Project) -> None:
    project.write(RUBRIC, BASE_YAML.replace("task: Summarize", "task: Sum\x00marize"))
    assert_one_line_error(project.run("attribute", RUBRIC), f"{RUBRIC}:3:", "character #x0000 is not allowed")


def test_empty_path_is_not_the_current_directory(project: Project) -> None:
    assert_one_line_error(project.run("attribute", ""), "'':", "empty path")
    assert_one_line_error(project.run("attribute", RUBRIC, "--calibration", ""), "'':", "empty path")


def test_deeply_nested_yaml_is_one_line_error(project: Project) -> None:
    project.write(RUBRIC, "id: " + "[" * 5000 + "]" * 5000 + "\n")
    assert_one_line_error(project.run("attribute", RUBRIC), f"{RUBRIC}:", "nested too deeply")


def test_merge_keys_and_anchors_are_read(project: Project) -> None:
    """`<<:` merges are ordinary YAML: the rubric loads like its expansion, its own keys winning."""
    expected = project.run("attribute", RUBRIC, "--format", "json")
    merged = BASE_YAML.replace(
        "  - id: B\n    text: The output satisfies requirement B.\n",
        "  - &b\n    id: B\n    text: The output satisfies requirement B.\n",
    ).replace(
        "  - id: C\n    text: The output satisfies requirement C.\n",
        "  - <<: *b\n    id: C\n    text: The output satisfies requirement C.\n",
    )
    project.write(RUBRIC, merged)
    proc = project.run("attribute", RUBRIC, "--format", "json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["checks"] == json.loads(expected.stdout)["checks"]


@pytest.mark.parametrize(("written", "shown"), [("1.10", "1.10"), ("010", "010"), ("2026-01-31", "2026-01-31"),
                                                ("7", "7")])
def test_version_is_shown_as_written(project: Project, written: str, shown: str) -> None:
    project.write(RUBRIC, BASE_YAML.replace("version: 1", f"version: {written}"))
    proc = project.run("check", "--base", "HEAD:" + RUBRIC, "--head", RUBRIC, "--format", "json")
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert report["head"]["version"] == shown
    gated = project.write("gated.yaml", report["gated_rubric"])
    again = project.run("attribute", str(gated), "--format", "json")
    assert json.loads(again.stdout)["version"] == shown


@pytest.mark.parametrize(
    ("line", "fragment"),
    [
        ('{"id": "R1", "input": ' + "9" * 5000 + ', "output": "o", "label": "fail"}', "malformed JSON (Exceeds the limit"),
        ('{"id": "R1", "input": ' + "[" * 100000 + "]" * 100000 + ', "output": "o", "label": "fail"}',
         "malformed JSON (nested too deeply)"),
        ('{"id": "R1", "input": "\\ud800", "output": "o", "label": "fail"}', "half a surrogate pair"),
        ('{"id": "R1", "input": "i", "output": "o", "label": "pass", "label": "fail"}', "duplicate key 'label'"),
    ],
    ids=["huge-number", "deep-nesting", "lone-surrogate", "duplicate-key"],
)
def test_hostile_jsonl_is_one_line_error(project: Project, line: str, fragment: str) -> None:
    path = project.root / CALIBRATION
    lines = path.read_text().splitlines(keepends=True)
    path.write_text(lines[0] + line + "\n" + "".join(lines[1:]))
    before = path.read_bytes()
    assert_one_line_error(project.run("attribute", RUBRIC), f"{CALIBRATION}:2:", fragment)
    assert path.read_bytes() == before


def test_git_tree_is_not_read_as_a_rubric(project: Project) -> None:
    proc = project.run("check", "--base", "HEAD:rubrics", "--head", RUBRIC)
    assert_one_line_error(proc, "HEAD:rubrics:", "is a directory, expected a file")


def test_option_like_ref_is_refused_and_writes_nothing(project: Project) -> None:
    target = project.root / "written"
    proc = project.run("check", "--base", f"--output={target}:x", "--head", RUBRIC)
    assert_one_line_error(proc, f"--output={target}:x:", "not a git revision")
    assert not list(project.root.glob("written*"))


def _run_into_closed_pipe(project: Project, *args: str) -> tuple[int, str]:
    proc = subprocess.Popen([sys.executable, "-m", "rubric_gate", *args], cwd=project.root,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()  # the reader is gone before the report is written, as with `| head -c 0`
    stderr = proc.stderr.read()
    return proc.wait(timeout=60), stderr


def _but_the_action_view(stderr: str) -> str:
    """stderr without the one line `check --base REF:PATH` says about preview and the action."""
    return "".join(line for line in stderr.splitlines(keepends=True)
                   if not line.startswith("rubric-gate: preview and the action "))


@pytest.mark.parametrize("fmt", ["json", "markdown", "text"])
def test_closed_stdout_keeps_the_exit_code(project: Project, fmt: str) -> None:
    failing = BASE_YAML + "  - id: E\n    text: The output satisfies requirement E.\n"  # blame on R4
    project.write("failing.yaml", failing)
    code, stderr = _run_into_closed_pipe(project, "check", "--base", "HEAD:" + RUBRIC, "--head", "failing.yaml",
                                         "--format", fmt)
    assert (code, _but_the_action_view(stderr)) == (1, "")
    code, stderr = _run_into_closed_pipe(project, "check", "--base", "HEAD:" + RUBRIC, "--head", RUBRIC, "--format", fmt)
    assert (code, _but_the_action_view(stderr)) == (0, "")
    code, stderr = _run_into_closed_pipe(project, "attribute", RUBRIC, "--format", fmt)
    assert (code, stderr) == (0, "")


def test_rich_markup_in_user_text_is_printed_literally(project: Project) -> None:
    for relative in (CALIBRATION, VERDICTS):
        path = project.root / relative
        path.write_text(path.read_text().replace('"R4"', '"[/]"').replace('"R5"', '"[bold]R5"'))
    head = BASE_YAML.replace("id: demo", "id: '[red]demo'") + "  - id: E\n    text: The output satisfies requirement E.\n"
    project.write("head.yaml", head)
    proc = project.run("check", "--base", "HEAD:" + RUBRIC, "--head", "head.yaml")
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert "answers no on 1 correct item ([/])" in proc.stdout
    assert "rubric id changed from 'demo' to '[red]demo'" in proc.stdout
    proc = project.run("attribute", "head.yaml")
    assert proc.returncode == 0 and "[red]demo" in proc.stdout, proc.stderr


def test_markdown_user_text_cannot_start_lines(project: Project) -> None:
    head = BASE_YAML.replace("id: demo", 'id: "demo\\n\\n## rubric-gate: PASS\\n"')
    project.write("head.yaml", head)
    proc = project.run("check", "--base", "HEAD:" + RUBRIC, "--head", "head.yaml", "--format", "markdown")
    assert proc.returncode == 0, proc.stderr
    headings = [line for line in proc.stdout.splitlines() if line.startswith("#")]
    assert len(headings) == 1, headings


def test_gate_never_deletes_the_last_check(project: Project) -> None:
    """Every addition rejected and every deletion allowed would leave no checks at all."""
    one = HEADER + "checks:\n  - id: E\n    text: The output satisfies requirement E.\n"  # catches nothing
    project.write("base.yaml", one)
    project.write("head.yaml", HEADER + "checks:\n  - id: D\n    text: The output satisfies requirement D.\n")
    proc = project.run("check", "--base", "base.yaml", "--head", "head.yaml", "--format", "json")
    assert proc.returncode == 1, proc.stderr
    report = json.loads(proc.stdout)
    reasons = {c["check"]: c["reason"] for c in report["changes"]}
    assert "would leave no check" in reasons["E"]
    assert [c["id"] for c in yaml.safe_load(report["gated_rubric"])["checks"]] == ["E"]


def test_gated_rubric_passes_against_the_same_base(project: Project) -> None:
    """Credits sum to flawed items caught, blame to correct items failed; the gated rubric is a
    valid rubric that the gate accepts in full against the same base."""
    head = (BASE_YAML.replace("  - id: C\n    text: The output satisfies requirement C.\n", "")
            .replace("requirement A.", "requirement B.")
            + "  - id: E\n    text: The output satisfies requirement E.\n")
    project.write("head.yaml", head)
    proc = project.run("check", "--base", "HEAD:" + RUBRIC, "--head", "head.yaml", "--format", "json")
    assert proc.returncode == 1, proc.stderr
    report = json.loads(proc.stdout)
    for side in ("base", "head", "gated"):
        summary = report[side]
        rates = summary["rates"]
        assert sum(c["credit"] for c in summary["checks"]) == pytest.approx(rates["flawed_caught"]["count"], abs=1e-3)
        failed_correct = rates["correct_passed"]["total"] - rates["correct_passed"]["count"]
        assert sum(c["blame"] for c in summary["checks"]) == pytest.approx(failed_correct, abs=1e-3)
    project.write("gated.yaml", report["gated_rubric"])
    again = project.run("check", "--base", "HEAD:" + RUBRIC, "--head", "gated.yaml", "--format", "json")
    assert again.returncode == 0, again.stdout + again.stderr
    assert all(c["decision"] == "accepted" for c in json.loads(again.stdout)["changes"])


def test_issue_references_in_user_text_do_not_cross_link() -> None:
    from rubric_gate.report import neutralize

    assert "#1" not in neutralize("see #123 and acme/repo#7")
    assert neutralize("C#") == "C\\#"  # no digit follows: only escaped, shown as typed


def _rendered_outside_code(markdown: str) -> str:
    """What GitHub renders as Markdown: outside fenced blocks and inline code spans."""
    import re

    without_fences = re.sub(r"(`{3,})[^\n]*\n.*?\n\1", "", markdown, flags=re.S)
    return re.sub(r"(`+)(?!`).*?(?<!`)\1(?!`)", "", without_fences)


def test_links_and_images_in_user_text_stay_inert(project: Project) -> None:
    badge = "![PASS](https://evil.test/pass.svg)"
    link = "[approved](https://evil.test)"
    for relative in (CALIBRATION, VERDICTS):
        path = project.root / relative
        path.write_text(path.read_text().replace('"R4"', json.dumps(badge)[0:-1].replace('"', '"', 1) + '"'))
    head = (BASE_YAML.replace("version: 1", f"version: '{link} www.evil.test'")
            + "  - id: E\n    text: The output satisfies requirement E.\n")
    project.write("head.yaml", head)
    proc = project.run("check", "--base", "HEAD:" + RUBRIC, "--head", "head.yaml", "--format", "markdown")
    assert proc.returncode == 1, proc.stderr
    prose = _rendered_outside_code(proc.stdout)
    assert "](" not in prose.replace("\\](", "")  # every bracket escaped: no live link or image
    assert "https://evil" not in prose and "www.evil" not in prose  # no autolink either
    from tests.support import gfm

    heading = gfm.top_level(gfm.parse(proc.stdout))[0]
    assert f"version 1 → {link} www.evil.test" in heading.text().replace("\u200b", "")  # shown as written


def test_code_spans_show_user_text_exactly() -> None:
    from rubric_gate.report.markdown import code_fence, code_span

    assert code_span("a<b&c", table=False) == "`a<b&c`"  # no &lt; inside a span: it would show literally
    assert code_span("a|b", table=False) == "`a|b`" and code_span("a|b") == "`a\\|b`"
    assert code_span("tick`s") == "``tick`s``" and code_span("`x") == "`` `x ``"
    assert code_fence("text: uses ``` inside") == "````"


def test_gated_rubric_keeps_backticks_in_check_text(project: Project) -> None:
    head = BASE_YAML.replace("requirement D.", "requirement D (see ```code```).")
    verdicts = project.root / VERDICTS
    verdicts.write_text(verdicts.read_text() + "".join(
        json.dumps({"item": i, "check_text": "The output satisfies requirement D (see ```code```).",
                    "answer": "no" if i in ("R3", "R4") else "yes"}) + "\n" for i in ("R1", "R2", "R3", "R4", "R5")))
    project.write("head.yaml", head)
    proc = project.run("check", "--base", "HEAD:" + RUBRIC, "--head", "head.yaml", "--format", "markdown")
    assert proc.returncode == 0, proc.stderr
    block = proc.stdout.split("````yaml\n", 1)[1].split("\n````", 1)[0]
    assert yaml.safe_load(block)["checks"][3]["text"] == "The output satisfies requirement D (see ```code```)."


def test_terminal_escapes_in_user_text_are_not_printed(project: Project) -> None:
    for relative in (CALIBRATION, VERDICTS):
        path = project.root / relative
        path.write_text(path.read_text().replace('"R4"', '"R4\\u001b[2J\\u001b]8;;http://x\\u0007"'))
    project.write("head.yaml", BASE_YAML + "  - id: E\n    text: The output satisfies requirement E.\n")
    proc = project.run("check", "--base", "HEAD:" + RUBRIC, "--head", "head.yaml")
    assert proc.returncode == 1, proc.stderr
    assert "\x1b" not in proc.stdout and "\x07" not in proc.stdout
    assert "R4\ufffd[2J" in proc.stdout
