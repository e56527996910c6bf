"""An inspect_ai scorer grading with a gated rubric (`pip install 'rubric-gate[inspect]'`).

    from rubric_gate.integrations.inspect_ai import rubric_scorer

    Task(dataset=..., solver=generate(), scorer=rubric_scorer("rubrics/support.yaml"))

Each check is asked with rubric-gate's per-check prompt through inspect's model API (the
`grader` model role, else the model under evaluation, or `model=`); the sample scores 1 when
every check says yes (at most K may say no with `max_failures=K` or the rubric's aggregation),
0 otherwise, and is left unscored when a check never got a valid reply and could change that.
The score's metadata holds every check's answer and quote. With `verdicts=PATH` each answer is
appended to that verdict store under `judge` (default: the grader's `provider:model`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from inspect_ai.model import GenerateConfig, Model, ResponseSchema, get_model
from inspect_ai.scorer import Score, Scorer, Target, accuracy, scorer, stderr
from inspect_ai.solver import TaskState
from inspect_ai.util import JSONSchema

from rubric_gate.integrations.checklist import (
    MAX_TOKENS,
    REPLY_NAME,
    REPLY_SCHEMA,
    GatedChecklist,
    judge_key,
)

__all__ = ["rubric_scorer"]


@scorer(metrics=[accuracy(), stderr()])
def rubric_scorer(rubric: str | Path, *, model: str | Model | None = None, model_role: str | None = "grader",
                  max_failures: int | None = None, verdicts: str | Path | None = None,
                  judge: str | None = None) -> Scorer:
    """Score each sample with every check of `rubric` (a rubric file or a gated promptfoo config)."""
    checklist = GatedChecklist.load(rubric, max_failures=max_failures)
    config = GenerateConfig(max_tokens=MAX_TOKENS, response_schema=ResponseSchema(
        name=REPLY_NAME, json_schema=JSONSchema.model_validate(REPLY_SCHEMA), strict=True))

    async def score(state: TaskState, target: Target) -> Score:
        grader = get_model(model) if model is not None else get_model(role=model_role)

        async def ask(prompt: str) -> str:
            output = await grader.generate(prompt, config=config)
            return str(output.completion)

        item_input, item_output = state.input_text, state.output.completion
        graded = await checklist.grade(ask, item_input, item_output)
        metadata: dict[str, Any] = graded.metadata()
        if verdicts is not None:
            key = judge or judge_key(str(grader))
            recorder = GatedChecklist(checklist.rubric, checklist.max_failures, checklist.display, Path(verdicts), key)
            metadata["recorded"] = recorder.record(graded, str(state.sample_id), item_input, item_output)
            metadata["judge"] = key
        if graded.score is None:
            return Score.unscored(reason=graded.reason, answer=item_output, explanation=graded.reason,
                                  metadata=metadata)
        return Score(value=graded.score, answer=item_output, explanation=graded.reason, metadata=metadata)

    return score
