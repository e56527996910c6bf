"""`rubric-gate export`: a promptfoo block that promptfoo itself validates and that reads back
as the same checklist, an OpenAI multi grader that fits the SDK's grader types and passes
exactly when the rubric does, and an inspect task that runs."""

from __future__ import annotations

import ast
import itertools
import json
import math
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from rubric_gate.integrations.export import ExportError, openai_multi_grader, validate_multi_grader
from rubric_gate.rubric import load_rubric
from tests.support.cli import rubric_gate
from tests.support.promptfoo_project import CONFIG_PATH, RUBRIC_PATH, make_repo

ROOT = Path(__file__).resolve().parents[2]
PROMPTFOO_HOME = ROOT / ".tools" / "promptfoo"  # where `make test-integrations` installs it


def promptfoo_binary() -> Path:
    given = os.environ.get("PROMPTFOO_BIN")
    binary = Path(given) if given else PROMPTFOO_HOME / "node_modules" / ".bin" / "promptfoo"
    if not binary.exists():
        why = ("node is not installed" if shutil.which("node") is None else
               f"promptfoo is not installed at {binary} (make test-integrations installs it from npm)")
        pytest.skip(f"promptfoo validate needs promptfoo: {why}")
    return binary


def wrap(block: str) -> str:
    """The exported block merged into a minimal config (promptfoo requires prompts and providers)."""
    return 'prompts: ["Customer: {{question}}"]\nproviders: [echo]\n' + block


@pytest.fixture
def repo(tmp_path: Path):
    return make_repo(tmp_path / "repo", branch=False)


def export(repo, fmt: str, rubric: str = RUBRIC_PATH, *more: str):
    result = rubric_gate(repo.root, "export", "--to", fmt, rubric, *more)
    assert result.returncode == 0, result.stderr
    return result.stdout


@pytest.mark.parametrize("max_failures", [0, 2])
def test_promptfoo_validate_accepts_the_exported_block(repo, tmp_path: Path, max_failures: int) -> None:
    binary = promptfoo_binary()
    if max_failures:
        native = (repo.root / RUBRIC_PATH).read_text()
        repo.write(RUBRIC_PATH, native.replace("checks:\n", f"aggregation: {{max_failures: {max_failures}}}\nchecks:\n"))
    config = tmp_path / "exported.yaml"
    config.write_text(wrap(export(repo, "promptfoo")))
    env = {**os.environ, "PROMPTFOO_DISABLE_TELEMETRY": "1", "PROMPTFOO_DISABLE_UPDATE": "1",
           "PROMPTFOO_CONFIG_DIR": str(tmp_path / "promptfoo-home")}
    result = subprocess.run([str(binary), "validate", "-c", str(config)], capture_output=True, text=True,
                            env=env, timeout=300, check=False)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Configuration is valid." in result.stdout
    # and promptfoo refuses what is not a config: the check can fail
    config.write_text(wrap("defaultTest:\n  assert: polite\n"))
    refused = subprocess.run([str(binary), "validate", "-c", str(config)], capture_output=True, text=True,
                             env=env, timeout=300, check=False)
    assert refused.returncode != 0


def test_the_exported_block_reads_back_as_the_same_checklist(repo) -> None:
    repo.write(CONFIG_PATH, "description: Answer the customer's refund question from the policy excerpt, politely "
               "and accurately.\n" + wrap(export(repo, "promptfoo")))
    native, read_back = load_rubric(repo.root / RUBRIC_PATH).rubric, load_rubric(repo.root / CONFIG_PATH).rubric
    assert [(c.id, c.text) for c in read_back.checks] == [(c.id, c.text) for c in native.checks]
    # the recorded verdicts still apply: attribute scores both the same
    first = json.loads(rubric_gate(repo.root, "attribute", RUBRIC_PATH, "--format", "json").stdout)
    second = json.loads(rubric_gate(repo.root, "attribute", CONFIG_PATH, "--format", "json").stdout)
    assert first["checks"] == second["checks"] and first["rates"] == second["rates"]


def _evaluate(formula: str, values: dict[str, int]) -> float:
    python = formula.replace("^", "**")
    return eval(python, {"__builtins__": {}, "min": min, "max": max, "floor": math.floor}, dict(values))


@pytest.mark.parametrize("max_failures", [0, 1, 2])
def test_the_multi_grader_passes_exactly_when_the_rubric_does(repo, max_failures: int) -> None:
    rubric = load_rubric(repo.root / RUBRIC_PATH).rubric
    rubric = type(rubric).model_validate({**rubric.model_dump(), "aggregation": {"max_failures": max_failures}
                                          if max_failures else "all-pass"})
    grader = openai_multi_grader(rubric)
    names = list(grader["graders"])
    assert len(names) == len(rubric.checks) == 6
    for labels in itertools.product((0, 1), repeat=len(names)):
        score = _evaluate(grader["calculate_output"], dict(zip(names, labels, strict=True)))
        assert score == (1 if labels.count(0) <= max_failures else 0), (labels, grader["calculate_output"])


def test_each_label_grader_asks_the_per_check_prompt(repo) -> None:
    grader = json.loads(export(repo, "openai-graders", CONFIG_PATH, "--model", "gpt-4.1-mini-2025-04-14"))
    assert grader["type"] == "multi" and grader["name"] == "support"
    entry = grader["graders"]["polite"]
    assert entry["type"] == "label_model" and entry["model"] == "gpt-4.1-mini-2025-04-14"
    assert entry["labels"] == ["yes", "no", "n/a"] and entry["passing_labels"] == ["yes", "n/a"]
    prompt = entry["input"][0]["content"]
    assert "<output>\n{{sample.output_text}}\n</output>" in prompt and "{{item.input}}" in prompt
    assert "<check>\nThe answer is polite and does not blame the customer.\n</check>" in prompt
    validate_multi_grader(grader)


@pytest.mark.parametrize(("change", "what"), [
    (lambda g: g["graders"]["polite"].update(passing_labels=["maybe"]), "subset of labels"),
    (lambda g: g["graders"]["polite"].update(pasing_labels=["yes"]), "keys the SDK's LabelModelGrader lacks"),
    (lambda g: g["graders"]["polite"].update(model=None), "not an OpenAI grader"),
    (lambda g: g.update(calculate_output="min(polite, concise)"), "calculate_output uses"),
])
def test_the_grader_check_can_fail(repo, change, what: str) -> None:
    grader = json.loads(export(repo, "openai-graders"))
    change(grader)
    with pytest.raises(ExportError, match=what):
        validate_multi_grader(grader)


def test_the_inspect_task_is_python_and_runs(repo, tmp_path: Path) -> None:
    source = export(repo, "inspect", CONFIG_PATH)
    ast.parse(source)
    inspect_ai = pytest.importorskip("inspect_ai", reason="the inspect extra is not installed (make test-integrations)")
    from inspect_ai.model import ModelOutput, ModelUsage, get_model

    from tests.integrations.recorded import recorded_reply

    def answer(messages, tools, tool_choice, config) -> ModelOutput:
        text = messages[-1].text
        reply = recorded_reply(text) if "<check>" in text else f"answer {text.removeprefix('question ')}"
        output = ModelOutput.from_content("mockllm/model", reply)
        output.usage = ModelUsage(input_tokens=1, output_tokens=1)
        return output

    (repo.root / "task.py").write_text(source)
    namespace: dict = {}
    cwd = Path.cwd()
    os.chdir(repo.root)
    try:
        exec(compile(source, "task.py", "exec"), namespace)
        model = get_model("mockllm/model", custom_outputs=answer, memoize=False)
        [log] = inspect_ai.eval(namespace["support"](), model=model, model_roles={"grader": model},
                                log_dir=str(tmp_path / "logs"), display="none")
    finally:
        os.chdir(cwd)
    assert log.status == "success", log.error
    scores = {s.id: next(iter(s.scores.values())).value for s in log.samples}
    assert scores["P1"] == 1.0 and scores["F4"] == 0.0 and len(scores) == 11


def test_export_of_a_bad_rubric_is_bad_input(repo) -> None:
    repo.write(RUBRIC_PATH, "id: x\n")
    result = rubric_gate(repo.root, "export", "--to", "promptfoo", RUBRIC_PATH)
    assert result.returncode == 2 and result.stdout == ""
