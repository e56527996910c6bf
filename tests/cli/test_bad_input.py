"""Every bad input exits 2 with one line naming the file and line, and no traceback."""

from __future__ import annotations

import re

import pytest

from tests.support.project import BASE_YAML, Project

RUBRIC = "rubrics/demo.yaml"
CALIBRATION = "calibration/demo.jsonl"
VERDICTS = "calibration/demo.verdicts.jsonl"


def replace_line(text: str, line: int, new: str) -> str:
    lines = text.splitlines(keepends=True)
    lines[line - 1] = new + "\n"
    return "".join(lines)


RUBRIC_CASES = [
    pytest.param(replace_line(BASE_YAML, 3, "task: [unclosed"), 4, "flow sequence at line 3", id="yaml-syntax"),
    pytest.param(BASE_YAML.replace("    origin: label\n", "    orign: label\n"), 9,
                 "unknown key 'orign' (did you mean 'origin'?)", id="unknown-check-key"),
    pytest.param("verison: 2\n" + BASE_YAML, 1, "unknown key 'verison' (did you mean 'version'?)", id="unknown-top-key"),
    pytest.param(BASE_YAML.replace("id: D\n", "id: B\n"), 15, "duplicate check id 'B' (first at line 11)", id="duplicate-check-id"),
    pytest.param(BASE_YAML.replace("version: 1\n", "version: 1\nversion: 2\n"), 3, "duplicate key 'version'", id="duplicate-yaml-key"),
    pytest.param(BASE_YAML.replace("origin: label", "origin: human"), 9, "checks.0.origin", id="bad-origin"),
    pytest.param(BASE_YAML.replace("task: Summarize the incident.\n", ""), None, "missing required key 'task'", id="missing-task"),
    pytest.param(BASE_YAML.replace("checks:\n", "aggregation: {max_failures: -1}\nchecks:\n"), 6,
                 "aggregation must be 'all-pass' or {max_failures: K}", id="bad-aggregation"),
    pytest.param("- just\n- a list\n", 1, "a rubric must be a mapping", id="not-a-mapping"),
    pytest.param(BASE_YAML.replace("task:", "tsak:"), 3, "unknown key 'tsak' (did you mean 'task'?)", id="misspelt-task"),
    pytest.param(BASE_YAML.replace("    text: The output satisfies requirement B.", "    txt: The output satisfies requirement B."),
                 12, "unknown key 'txt' (did you mean 'text'?)", id="misspelt-check-text"),
    pytest.param(BASE_YAML.replace("checks:\n", "aggregation: {max_failures: 4}\nchecks:\n"), 6,
                 "max_failures is 4 but the rubric has 4 check(s)", id="max-failures-too-high"),
    pytest.param("", 1, "file is empty", id="empty"),
]


def assert_one_line_error(proc, where: str, fragment: str) -> None:
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith(f"rubric-gate: error: {where}"), lines[0]
    assert fragment in lines[0], lines[0]


@pytest.mark.parametrize(("text", "line", "fragment"), RUBRIC_CASES)
def test_bad_rubric(project: Project, text: str, line: int | None, fragment: str) -> None:
    project.write(RUBRIC, text)
    proc = project.run("check", "--base", "HEAD:" + RUBRIC, "--head", RUBRIC)
    where = f"{RUBRIC}:{line}:" if line else f"{RUBRIC}:"
    assert_one_line_error(proc, where, fragment)
    assert (project.root / RUBRIC).read_text() == text  # never rewritten


def _mutate_jsonl(project: Project, relative: str, line: int, new: str) -> None:
    text = (project.root / relative).read_text()
    project.write(relative, replace_line(text, line, new))


@pytest.mark.parametrize(
    ("relative", "line", "new", "fragment"),
    [
        (CALIBRATION, 3, '{"id": "R3", "input": "x", "output": "y", "label": "fial"}', "label must be 'pass' or 'fail', got 'fial'"),
        (CALIBRATION, 2, '{"id": "R2", "input": "x"', "malformed JSON"),
        (CALIBRATION, 4, '{"id": "R1", "input": "x", "output": "y", "label": "pass"}', "duplicate item id 'R1' (first at line 1)"),
        (CALIBRATION, 5, '{"id": "R5", "input": "x", "label": "pass"}', "missing required key 'output'"),
        (CALIBRATION, 1, '["not", "an", "object"]', "each line must be a JSON object"),
        (VERDICTS, 7, '{"item": "R2", "check_text": "x", "answer": "maybe"}', "answer must be 'yes', 'no' or 'n/a', got 'maybe'"),
        (VERDICTS, 4, '{"item": "R1", "check_text": ', "malformed JSON"),
        (CALIBRATION, 5, '{"id": "R5", "input": "env R4", "output": "report R4", "label": "fail"}',
         "same input and output as 'R4' (line 4) but the opposite label"),
    ],
)
def test_bad_jsonl(project: Project, relative: str, line: int, new: str, fragment: str) -> None:
    _mutate_jsonl(project, relative, line, new)
    before = (project.root / relative).read_bytes()
    proc = project.run("attribute", RUBRIC)
    assert_one_line_error(proc, f"{relative}:{line}:", fragment)
    assert (project.root / relative).read_bytes() == before


def test_missing_verdicts_name_the_checks(project: Project) -> None:
    head = BASE_YAML + "  - id: F\n    text: A check nobody has judged yet.\n"
    project.write(RUBRIC, head)
    proc = project.run("check", "--base", "HEAD:" + RUBRIC, "--head", RUBRIC)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert re.search(r"no recorded verdict in calibration/demo.verdicts.jsonl for check F \(5/5 items, e.g. R1, R2, R3, R4, R5\).*--judge", proc.stderr), proc.stderr


def test_reworded_check_needs_new_verdicts(project: Project) -> None:
    project.write(RUBRIC, BASE_YAML.replace("requirement C.", "requirement C, reworded."))
    proc = project.run("check", "--base", "HEAD:" + RUBRIC, "--head", RUBRIC)
    assert proc.returncode == 2 and "check C (5/5 items" in proc.stderr


def test_missing_file_and_bad_ref(project: Project) -> None:
    assert_one_line_error(project.run("attribute", "rubrics/nope.yaml"), "rubrics/nope.yaml:", "file not found")
    proc = project.run("check", "--base", "no-such-ref:" + RUBRIC, "--head", RUBRIC)
    assert_one_line_error(proc, f"no-such-ref:{RUBRIC}:", "cannot read from git")


def test_torn_last_verdict_line_is_tolerated(project: Project) -> None:
    path = project.root / VERDICTS
    path.write_text(path.read_text() + '{"item": "R1", "check_te')
    proc = project.run("attribute", RUBRIC, "--format", "json")
    assert proc.returncode == 0, proc.stderr


def test_usage_errors_exit_2(project: Project) -> None:
    proc = project.run("check", "--head", RUBRIC)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr and "--base" in proc.stderr


@pytest.mark.parametrize(("name", "value"), [("RUBRIC_GATE_MAX_RETRIES", "lots"), ("RUBRIC_GATE_JUDGE_TIMEOUT", "-1"),
                                             ("RUBRIC_GATE_MAX_REASKS", "-2")])
def test_bad_tuning_variables_are_input_errors(name: str, value: str) -> None:
    from rubric_gate.errors import InputError
    from rubric_gate.llm.retry import RetryPolicy, request_timeout

    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(name, value)
        with pytest.raises(InputError, match=f"environment variable {name}: expected"):
            request_timeout() if name.endswith("TIMEOUT") else RetryPolicy.from_env()


@pytest.mark.parametrize("args", [
    ("check", "--base", RUBRIC, "--head", RUBRIC, "--gates", "S+X"),  # a usage error raised by the command
    ("check", "--base", RUBRIC, "--head", "rubrics/nope.yaml"),  # bad input
    ("attribute", "rubrics/nope.yaml"),
])
def test_every_json_run_prints_one_object_when_it_fails(project: Project, args: tuple[str, ...]) -> None:
    import json

    proc = project.run(*args, "--format", "json")
    data = json.loads(proc.stdout)  # one JSON document, not nothing
    assert proc.returncode == 2 and data["decision"] is None and data["error"]["exit_code"] == 2
    assert data["error"]["message"] and "Traceback" not in proc.stderr
