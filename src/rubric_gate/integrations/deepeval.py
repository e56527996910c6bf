"""A DeepEval metric grading with a gated rubric (`pip install 'rubric-gate[deepeval]'`).

    from rubric_gate.integrations.deepeval import RubricGateMetric

    metric = RubricGateMetric("rubrics/support.yaml", model=my_judge)
    evaluate(test_cases=[LLMTestCase(input=..., actual_output=...)], metrics=[metric])

Each check is asked with rubric-gate's per-check prompt through the DeepEval model (`model=`: a
`DeepEvalBaseLLM`, a model name, or DeepEval's default); the score is 1 when every check says
yes (at most K may say no with `max_failures=K` or the rubric's aggregation), else 0, the reason
names the failing checks, and `score_breakdown` holds every check's answer. When a check never
got a valid reply and could change the outcome, `measure` raises (the outcome is not guessed).
With `verdicts=PATH` each answer is appended to that verdict store under `judge`.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from deepeval.metrics import BaseMetric
from deepeval.metrics.utils import initialize_model
from deepeval.models import DeepEvalBaseLLM
from deepeval.test_case import LLMTestCase

from rubric_gate.integrations.checklist import GatedChecklist, Graded

__all__ = ["RubricGateMetric", "UndecidedError"]


class UndecidedError(ValueError):
    """A check never got a valid reply and its answer would decide the outcome."""


def _text(reply: Any) -> str:
    """A DeepEval model's reply: text, or (text, cost) from its native models."""
    if isinstance(reply, tuple):
        reply = reply[0]
    return reply if isinstance(reply, str) else str(reply)


class RubricGateMetric(BaseMetric):
    def __init__(self, rubric: str | Path, model: str | DeepEvalBaseLLM | None = None, *,
                 max_failures: int | None = None, verdicts: str | Path | None = None, judge: str | None = None,
                 async_mode: bool = True, verbose_mode: bool = False) -> None:
        # DeepEval copies a metric by calling its constructor with the attributes named like its
        # parameters: each is kept under its own name.
        self.rubric, self.max_failures, self.verdicts, self.judge = rubric, max_failures, verdicts, judge
        self.checklist = GatedChecklist.load(rubric, max_failures=max_failures, verdicts=verdicts, judge=judge)
        self.model, self.using_native_model = initialize_model(model)
        self.evaluation_model = self.model.get_model_name()
        self.threshold = 1.0
        self.async_mode = async_mode
        self.verbose_mode = verbose_mode
        self.include_reason = True
        self.graded: Graded | None = None

    @property
    def __name__(self) -> str:
        return f"rubric-gate {self.checklist.rubric.id}"

    def measure(self, test_case: LLMTestCase, *args: Any, **kwargs: Any) -> float:
        graded = self.checklist.grade_sync(lambda prompt: _text(self.model.generate(prompt)),
                                           test_case.input, test_case.actual_output)
        return self._finish(test_case, graded)

    async def a_measure(self, test_case: LLMTestCase, *args: Any, **kwargs: Any) -> float:
        async def ask(prompt: str) -> str:
            return _text(await self.model.a_generate(prompt))

        graded = await self.checklist.grade(ask, test_case.input, test_case.actual_output)
        return self._finish(test_case, graded)

    def _finish(self, test_case: LLMTestCase, graded: Graded) -> float:
        self.graded = graded
        self.reason = graded.reason
        self.score_breakdown = {a.check: a.answer for a in graded.answers}
        item = test_case.name or "deepeval-" + hashlib.sha256(
            f"{test_case.input}\0{test_case.actual_output}".encode()).hexdigest()[:12]
        self.checklist.record(graded, item, test_case.input, test_case.actual_output)
        if graded.score is None:
            self.score, self.success, self.error = None, False, graded.reason
            raise UndecidedError(graded.reason)
        self.score = graded.score
        self.success = self.score >= self.threshold
        return float(self.score)

    def is_successful(self) -> bool:
        return bool(self.success) and self.error is None
