"""The inspect_ai scorer, run by inspect itself (`eval` with the `mockllm` model as grader):
the same per-check prompt, all-must-pass, per-check answers in the score's metadata, and
verdicts that `rubric-gate attribute` scores exactly as the recorded ones."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

inspect_ai = pytest.importorskip("inspect_ai", reason="the inspect extra is not installed (make test-integrations)")

from inspect_ai import Task, eval  # noqa: E402
from inspect_ai.dataset import Sample  # noqa: E402
from inspect_ai.model import ModelOutput, ModelUsage, get_model  # noqa: E402
from inspect_ai.solver import Generate, TaskState, solver  # noqa: E402

from rubric_gate.integrations.inspect_ai import rubric_scorer  # noqa: E402
from tests.integrations.recorded import asked, expected_pass, recorded_reply  # noqa: E402
from tests.support.cli import rubric_gate  # noqa: E402
from tests.support.promptfoo_project import CHECKS, CONFIG_PATH, make_repo  # noqa: E402

JUDGE = "openai:gpt-4o-mini"


@solver
def replay_output():
    """The output under evaluation is the calibration item's, as recorded."""
    async def solve(state: TaskState, generate: Generate) -> TaskState:
        state.output = ModelOutput.from_content("mockllm/model", state.metadata["output"])
        return state
    return solve


def grader(reply=recorded_reply):
    def answer(messages, tools, tool_choice, config) -> ModelOutput:
        output = ModelOutput.from_content("mockllm/model", reply(messages[-1].text))
        # usage given, so mockllm does not count tokens (tiktoken would fetch its encoding)
        output.usage = ModelUsage(input_tokens=len(messages[-1].text) // 4, output_tokens=len(output.completion) // 4)
        return output
    return get_model("mockllm/model", custom_outputs=answer, memoize=False)


def run(root: Path, scorer) -> list:
    items = [json.loads(line) for line in (root / "calibration/support.jsonl").read_text().splitlines()]
    task = Task(dataset=[Sample(id=i["id"], input=i["input"], metadata={"output": i["output"]}) for i in items],
                solver=[replay_output()], scorer=scorer)
    [log] = eval(task, model="mockllm/model", log_dir=str(root / "logs"), display="none")
    assert log.status == "success", log.error
    return log.samples


def test_the_scorer_grades_all_must_pass_and_feeds_the_gate(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, branch=False)
    store = tmp_path / "inspect.verdicts.jsonl"
    samples = run(repo.root, rubric_scorer(str(repo.root / CONFIG_PATH), model=grader(), verdicts=store,
                                          judge=JUDGE))
    for sample in samples:
        [score] = sample.scores.values()
        assert score.value == float(expected_pass(sample.id, list(CHECKS)))
        assert set(score.metadata["checks"]) == set(CHECKS)
        assert score.metadata["failed"] == [c for c in CHECKS if c in score.metadata["failed"]]
        assert score.metadata["recorded"] == 6
    # the scorer's verdicts, replayed by the gate, give exactly the recorded verdicts' table
    ours = rubric_gate(repo.root, "attribute", CONFIG_PATH, "--verdicts", str(store), "--format", "json")
    recorded = rubric_gate(repo.root, "attribute", CONFIG_PATH, "--format", "json")
    assert ours.returncode == recorded.returncode == 0
    assert json.loads(ours.stdout) == json.loads(recorded.stdout)
    rates = json.loads(recorded.stdout)["rates"]
    passed = sum(next(iter(s.scores.values())).value for s in samples)
    assert passed == rates["correct_passed"]["count"] + rates["flawed_caught"]["total"] - rates["flawed_caught"]["count"]


def test_at_most_k_and_an_unanswered_check_is_unscored(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, branch=False)

    def concise_never_parses(prompt: str) -> str:
        return "I think so." if asked(prompt)[0] == "concise" else recorded_reply(prompt)

    samples = {s.id: next(iter(s.scores.values())) for s in run(
        repo.root, rubric_scorer(str(repo.root / CONFIG_PATH), model=grader(concise_never_parses), max_failures=1))}
    assert samples["F3"].value == 0.0  # two checks say no: concise cannot save it
    assert samples["P1"].value == 1.0  # no check says no: concise alone cannot fail it under k = 1
    assert math.isnan(samples["F2"].value)  # one no: concise would decide it, and it never answered
    assert samples["F2"].metadata["unanswered"] == ["concise"]
    assert samples["F2"].explanation.startswith("undecided: no valid answer for concise")
