"""The DeepEval metric, run by DeepEval itself (`evaluate` with a fake `DeepEvalBaseLLM` judge):
score 1/0, the reason naming the failing checks, per-check verdicts, and answers that
`rubric-gate attribute` scores exactly as the recorded ones."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

deepeval = pytest.importorskip("deepeval", reason="the deepeval extra is not installed (make test-integrations)")

from deepeval import evaluate  # noqa: E402
from deepeval.evaluate.configs import AsyncConfig, DisplayConfig  # noqa: E402
from deepeval.models import DeepEvalBaseLLM  # noqa: E402
from deepeval.test_case import LLMTestCase  # noqa: E402

from rubric_gate.integrations.deepeval import RubricGateMetric, UndecidedError  # noqa: E402
from tests.integrations.recorded import asked, expected_pass, recorded_reply  # noqa: E402
from tests.support.cli import rubric_gate  # noqa: E402
from tests.support.promptfoo_project import CHECKS, CONFIG_PATH, make_repo  # noqa: E402

JUDGE = "openai:gpt-4o-mini"


class RecordedJudge(DeepEvalBaseLLM):
    """A DeepEval model answering from the recorded verdicts (no network, no key)."""

    def __init__(self, reply=recorded_reply) -> None:
        self.reply = reply
        self.prompts: list[str] = []
        super().__init__("recorded-judge")

    def load_model(self):
        return self

    def generate(self, prompt: str, *args, **kwargs) -> str:
        self.prompts.append(prompt)
        return self.reply(prompt)

    async def a_generate(self, prompt: str, *args, **kwargs) -> str:
        return self.generate(prompt)

    def get_model_name(self) -> str:
        return "recorded-judge"


@pytest.fixture(autouse=True)
def _offline(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("DEEPEVAL_TELEMETRY_OPT_OUT", "YES")
    monkeypatch.setenv("DEEPEVAL_UPDATE_WARNING_OPT_IN", "NO")
    monkeypatch.chdir(tmp_path)


def cases(root: Path) -> list[LLMTestCase]:
    items = [json.loads(line) for line in (root / "calibration/support.jsonl").read_text().splitlines()]
    return [LLMTestCase(input=i["input"], actual_output=i["output"], name=i["id"]) for i in items]


@pytest.mark.parametrize("run_async", [True, False])
def test_the_metric_grades_all_must_pass_and_feeds_the_gate(tmp_path: Path, run_async: bool) -> None:
    repo = make_repo(tmp_path / "repo", branch=False)
    store = tmp_path / "deepeval.verdicts.jsonl"
    metric = RubricGateMetric(str(repo.root / CONFIG_PATH), model=RecordedJudge(), verdicts=store, judge=JUDGE,
                              async_mode=run_async)
    result = evaluate(test_cases=cases(repo.root), metrics=[metric],
                      async_config=AsyncConfig(run_async=run_async), display_config=DisplayConfig(
                          show_indicator=False, print_results=False))
    assert len(result.test_results) == 11
    for test in result.test_results:
        [data] = test.metrics_data
        passes = expected_pass(test.name, list(CHECKS))
        assert (data.score, data.success) == (float(passes), passes)
        if not passes:
            assert data.reason.startswith("failed: no on ")
    # the metric's answers, replayed by the gate, give exactly the recorded verdicts' table
    ours = rubric_gate(repo.root, "attribute", CONFIG_PATH, "--verdicts", str(store), "--format", "json")
    recorded = rubric_gate(repo.root, "attribute", CONFIG_PATH, "--format", "json")
    assert ours.returncode == recorded.returncode == 0
    assert json.loads(ours.stdout) == json.loads(recorded.stdout)


def test_reason_and_breakdown_name_each_check(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", branch=False)
    metric = RubricGateMetric(str(repo.root / CONFIG_PATH), model=RecordedJudge(), max_failures=1)
    f3 = next(c for c in cases(repo.root) if c.name == "F3")
    assert metric.measure(f3) == 0.0 and not metric.is_successful()
    assert metric.reason == ("failed: no on polite, the-answer-makes-no-promise-the-policy-does-not "
                             "(at most 1 may fail)")
    assert metric.score_breakdown["polite"] == "no" and metric.score_breakdown["concise"] == "yes"
    f1 = next(c for c in cases(repo.root) if c.name == "F1")
    assert metric.measure(f1) == 1.0 and metric.is_successful()  # one no is allowed under k = 1


def test_an_unanswered_deciding_check_is_never_guessed(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", branch=False)

    def concise_never_parses(prompt: str) -> str:
        return "maybe" if asked(prompt)[0] == "concise" else recorded_reply(prompt)

    metric = RubricGateMetric(str(repo.root / CONFIG_PATH), model=RecordedJudge(concise_never_parses))
    p1 = next(c for c in cases(repo.root) if c.name == "P1")
    with pytest.raises(UndecidedError, match="no valid answer for concise"):
        metric.measure(p1)
    assert metric.score is None and not metric.is_successful()
