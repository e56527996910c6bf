"""A gated rubric written for another tool: a promptfoo assertion block, an OpenAI multi grader
(one label grader per check), or an inspect_ai task using `rubric_scorer`.

The check texts are exported as written, so a promptfoo block read back in place (with the same
`metric`s) is the same checklist and its recorded verdicts still apply.
"""

from __future__ import annotations

import json
import keyword
import re
from typing import Any

import yaml

from rubric_gate.judges.prompt import render_per_check
from rubric_gate.rubric import Rubric

FORMATS = ("promptfoo", "openai-graders", "inspect")
DEFAULT_GRADER_MODEL = "gpt-4o-mini-2024-07-18"  # one of the models OpenAI's graders accept
# OpenAI's grader templates: the item's fields and the graded sample's text.
ITEM_INPUT = "{{item.input}}"
SAMPLE_OUTPUT = "{{sample.output_text}}"
LABELS = ["yes", "no", "n/a"]
PASSING = ["yes", "n/a"]  # n/a: the check does not apply, never a fail
LABEL_INSTRUCTION = "Answer with the label only: yes, no or n/a, as the check's answer above."


class ExportError(Exception):
    """What we produced does not fit the tool's own types (a bug, never the user's input)."""


def _rule(rubric: Rubric) -> str:
    k = rubric.max_failures
    return "all must pass" if k == 0 else f"at most {k} may fail"


class _Block(yaml.SafeDumper):
    pass


_Block.add_representer(str, lambda d, v: d.represent_scalar("tag:yaml.org,2002:str", v,
                                                            style="|" if "\n" in v else None))


def promptfoo_block(rubric: Rubric, source: str) -> str:
    """`defaultTest.assert` with one llm-rubric assertion per check (`metric` keeps its id).
    Under at most K failures the assertions go in an assert-set whose threshold is (n - K) / n."""
    assertions: list[dict[str, Any]] = [{"type": "llm-rubric", "metric": c.id, "value": c.text} for c in rubric.checks]
    n, k = len(rubric.checks), rubric.max_failures
    if k:
        assertions = [{"type": "assert-set", "threshold": round((n - k) / n, 6), "assert": assertions}]
    body = yaml.dump({"defaultTest": {"assert": assertions}}, Dumper=_Block, sort_keys=False, allow_unicode=True,
                     width=100)
    task = " ".join(rubric.task.split())
    header = (f"# rubric-gate export --to promptfoo {source}: {rubric.id}, version {rubric.version}, "
              f"{n} checks, {_rule(rubric)}\n# task: {task}\n"
              "# Merge into your promptfoo config; gate it in place with .rubric-gate.yaml (docs/integrations.md).\n")
    return header + body


def _names(rubric: Rubric) -> dict[str, str]:
    """A formula variable per check id (letters, digits, `_`; unique)."""
    names: dict[str, str] = {}
    taken: set[str] = set()
    for check in rubric.checks:
        base = re.sub(r"\W", "_", check.id, flags=re.ASCII)
        base = base if base and not base[0].isdigit() and not keyword.iskeyword(base) else f"c_{base}"
        name, n = base, 1
        while name in taken:
            n += 1
            name = f"{base}_{n}"
        taken.add(name)
        names[check.id] = name
    return names


def openai_multi_grader(rubric: Rubric, model: str | None = None) -> dict[str, Any]:
    """A `multi` grader: one `label_model` grader per check asking rubric-gate's per-check prompt
    (labels yes / no / n/a; yes and n/a pass), combined so the output is 1 exactly when the
    rubric passes: `min(...)` under all-must-pass, `floor((sum + K) / n)` under at most K."""
    if model is None:
        judge = rubric.judge or ""
        model = judge.partition(":")[2] if judge.startswith("openai:") else DEFAULT_GRADER_MODEL
    names = _names(rubric)
    graders = {
        names[check.id]: {
            "type": "label_model",
            "name": check.id,
            "model": model,
            "input": [
                {"role": "user", "content": render_per_check(rubric.task, ITEM_INPUT, SAMPLE_OUTPUT, check.text)},
                {"role": "developer", "content": LABEL_INSTRUCTION},
            ],
            "labels": LABELS,
            "passing_labels": PASSING,
        }
        for check in rubric.checks
    }
    variables = list(graders)
    k, n = rubric.max_failures, len(variables)
    formula = f"min({', '.join(variables)})" if k == 0 else f"floor(({' + '.join(variables)} + {k}) / {n})"
    grader = {"type": "multi", "name": rubric.id, "graders": graders, "calculate_output": formula}
    validate_multi_grader(grader)
    return grader


def validate_multi_grader(grader: dict[str, Any]) -> None:
    """Check the grader against the `openai` SDK's grader types: every entry of `graders` is a
    `LabelModelGrader` with no key the type lacks, and the envelope a `MultiGrader`. (The SDK
    types `graders` as one grader; OpenAI's API reference and graders guide give a map of them,
    whose keys are the formula's variables: each entry is validated on its own.)"""
    from openai.types.graders import LabelModelGrader, MultiGrader
    from pydantic import ValidationError

    try:
        entries = grader["graders"]
        for name, entry in entries.items():
            LabelModelGrader.model_validate(entry)
            extra = set(entry) - set(LabelModelGrader.model_fields)
            if extra:
                raise ExportError(f"grader {name}: keys the SDK's LabelModelGrader lacks: {sorted(extra)}")
            if not set(entry["passing_labels"]) <= set(entry["labels"]):
                raise ExportError(f"grader {name}: passing_labels must be a subset of labels")
        first = next(iter(entries.values()))
        MultiGrader.model_validate({**grader, "graders": first})
    except ValidationError as exc:
        raise ExportError(f"not an OpenAI grader: {exc}") from None
    used = set(re.findall(r"[A-Za-z_]\w*", grader["calculate_output"])) - {"min", "max", "floor", "ceil", "abs"}
    if used != set(entries):
        raise ExportError(f"calculate_output uses {sorted(used)}, graders are {sorted(entries)}")


def inspect_task(rubric: Rubric, source: str) -> str:
    """A task file grading with `rubric_scorer` on the rubric's calibration set."""
    name = re.sub(r"\W", "_", rubric.id, flags=re.ASCII).strip("_") or "rubric"
    name = name if not name[0].isdigit() and not keyword.iskeyword(name) else f"rubric_{name}"
    return f'''"""An inspect_ai task grading with the gated rubric {rubric.id!r} ({_rule(rubric)}).

Written by `rubric-gate export --to inspect {source}`. Run it with
`inspect eval THIS_FILE --model PROVIDER/MODEL --model-role grader=PROVIDER/MODEL`; it needs
`pip install 'rubric-gate[inspect]'`. The dataset is the rubric's calibration set (string
inputs); point it at the outputs you grade in production instead.
"""

from inspect_ai import Task, task
from inspect_ai.dataset import FieldSpec, json_dataset
from inspect_ai.solver import generate

from rubric_gate.integrations.inspect_ai import rubric_scorer

RUBRIC = {json.dumps(source)}
CALIBRATION = {json.dumps(rubric.calibration)}


@task
def {name}() -> Task:
    return Task(
        dataset=json_dataset(CALIBRATION, FieldSpec(input="input", id="id", metadata=["label", "output"])),
        solver=generate(),
        scorer=rubric_scorer(RUBRIC),
    )
'''


def export(rubric: Rubric, fmt: str, source: str, model: str | None = None) -> str:
    if fmt == "promptfoo":
        return promptfoo_block(rubric, source)
    if fmt == "openai-graders":
        return json.dumps(openai_multi_grader(rubric, model), indent=2, ensure_ascii=False) + "\n"
    if fmt == "inspect":
        return inspect_task(rubric, source)
    raise ValueError(fmt)
