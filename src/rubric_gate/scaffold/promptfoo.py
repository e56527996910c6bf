"""What `init --from promptfoo PATH` writes: the settings naming the config's calibration set and
verdicts, a calibration template from its tests, and the workflow gating the config in place."""

from __future__ import annotations

import json
import re
from typing import Any

import yaml

from rubric_gate.rubric.mapping import MAPPING_FILE, normal_path
from rubric_gate.rubric.promptfoo import PromptfooChecklist
from rubric_gate.scaffold.plan import (
    COMMENT_WORKFLOW_PATH,
    FILES_DIR,
    WORKFLOW_PATH,
    ScaffoldFile,
    workflow_template,
)
from rubric_gate.sources.yaml_lines import LocatedYaml

TODO = "record this test's output and label it pass or fail (a human's verdict), then delete this todo"


def default_name(config_path: str) -> str:
    """`evals/support/promptfooconfig.yaml` -> `support`; `evals/refunds.yaml` -> `refunds`."""
    parts = normal_path(config_path).split("/")
    stem = re.sub(r"\.(ya?ml|json)$", "", parts[-1])
    name = parts[-2] if stem.startswith("promptfooconfig") and len(parts) > 1 else stem
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", name).strip("-._") or "promptfoo"


def settings_entry(config_path: str, name: str, checklist: PromptfooChecklist) -> str:
    entry: dict[str, Any] = {"id": name, "calibration": f"calibration/{name}.jsonl",
                             "verdicts": f"calibration/{name}.verdicts.jsonl"}
    if checklist.description is None:
        entry["task"] = "Describe what the graded output must do, in the words the judge should see."
    return yaml.safe_dump({"promptfoo": {normal_path(config_path): entry}}, sort_keys=False, allow_unicode=True,
                          width=100)


def calibration_template(located: LocatedYaml) -> tuple[str, int, int]:
    """One item per inline test: its vars as the input, its providerOutput as the output where it
    has one. Returns (JSONL, items, items with an output)."""
    tests = located.data.get("tests") if isinstance(located.data, dict) else None
    lines: list[str] = []
    with_output = 0
    taken: set[str] = set()
    for index, test in enumerate(tests if isinstance(tests, list) else []):
        if not isinstance(test, dict) or "path" in test:
            continue
        description = test.get("description")
        base = re.sub(r"[^a-z0-9]+", "-", str(description).lower()).strip("-") if description else ""
        item_id, n = base or f"test-{index + 1}", 1
        while item_id in taken:
            n += 1
            item_id = f"{base or 'test'}-{n}"
        taken.add(item_id)
        output = test.get("providerOutput")
        with_output += output is not None
        line = int(located.line_of(("tests", index)) or 0)
        lines.append(json.dumps({"id": item_id, "input": test.get("vars") or {}, "output": "" if output is None else output,
                                 "label": "pass", "meta": {"from": f"promptfoo test at line {line}", "todo": TODO}},
                                ensure_ascii=False) + "\n")
    return "".join(lines), len(lines), with_output


def promptfoo_workflow(config_path: str, action: str) -> str:
    """The workflow gating the config (a glob matching no file is an input error, so only the
    config: add `rubrics/**/*.y*ml` to the input when the repository has rubric files too)."""
    path = normal_path(config_path)
    text = workflow_template(action)
    text = text.replace("rubrics: rubrics/**/*.y*ml", f"rubrics: {path}")
    return text.replace("hashFiles('rubrics/**', 'calibration/**')",
                        f"hashFiles('rubrics/**', 'calibration/**', '{path}', '{MAPPING_FILE}')")


def promptfoo_files(config_path: str, name: str, located: LocatedYaml, checklist: PromptfooChecklist,
                    action: str) -> tuple[list[ScaffoldFile], int, int]:
    calibration, items, with_output = calibration_template(located)
    files = [
        ScaffoldFile(MAPPING_FILE, "# rubric-gate's settings: the promptfoo configs it gates in place "
                                   "(docs/integrations.md)\n" + settings_entry(config_path, name, checklist)),
        ScaffoldFile(f"calibration/{name}.jsonl", calibration),
        ScaffoldFile(WORKFLOW_PATH, promptfoo_workflow(config_path, action)),
        ScaffoldFile(COMMENT_WORKFLOW_PATH, (FILES_DIR / "rubric-gate-comment.yml").read_text(encoding="utf-8")),
    ]
    return files, items, with_output
