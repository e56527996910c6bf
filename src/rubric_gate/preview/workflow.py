"""The action's inputs as the repository's workflow passes them (`with:` of the rubric-gate step)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from rubric_gate.action.config import DEFAULTS
from rubric_gate.errors import InputError
from rubric_gate.scaffold.plan import DEFAULT_ACTION
from rubric_gate.scaffold.uses import names_placeholder

WORKFLOW_DIR = Path(".github/workflows")
# `uses: OWNER/rubric-gate@REF`, a local `./` copy of the action, or its image.
_USES = re.compile(r"(^|/)rubric-gate(@|$|:)|^\./?$")
# What the preview sets itself: where it writes, and that no GitHub token is used.
PREVIEW_OWNED = ("github_token", "output_dir", "verdict_cache", "comment")


@dataclass
class WorkflowInputs:
    path: str | None  # the workflow file read, relative to the repository root
    inputs: dict[str, str] = field(default_factory=dict)
    skipped: list[str] = field(default_factory=list)  # inputs set by an expression only a runner evaluates


def _steps(document: object) -> list[dict]:
    jobs = document.get("jobs") if isinstance(document, dict) else None
    steps = []
    for job in (jobs or {}).values() if isinstance(jobs, dict) else []:
        for step in (job or {}).get("steps") or [] if isinstance(job, dict) else []:
            if isinstance(step, dict):
                steps.append(step)
    return steps


def _gate_step(document: object) -> dict | None:
    for step in _steps(document):
        uses = str(step.get("uses") or "").split("#")[0].strip()
        if uses and _USES.search(uses.removeprefix("docker://")):
            return step
    return None


def workflow_inputs(root: Path, workflow: Path | None = None) -> WorkflowInputs:
    """The first workflow step that uses rubric-gate (in `workflow`, else in the repository's
    workflows), with the inputs it passes; no workflow: the action's defaults."""
    candidates = [workflow] if workflow is not None else sorted(
        p for p in (root / WORKFLOW_DIR).glob("*") if p.suffix in (".yml", ".yaml"))
    for path in candidates:
        shown = path.relative_to(root) if path.is_relative_to(root) else path
        try:
            document = yaml.safe_load(path.read_text(encoding="utf-8"))
        except OSError as exc:
            raise InputError(shown, f"cannot read the workflow ({exc.strerror or exc})") from None
        except yaml.YAMLError as exc:
            if workflow is not None:
                raise InputError(shown, f"not valid YAML ({str(exc).splitlines()[0]})") from None
            continue  # another workflow's problem, not the preview's
        step = _gate_step(document)
        if step is None:
            if workflow is not None:
                raise InputError(shown, "no step of this workflow uses rubric-gate")
            continue
        found = WorkflowInputs(str(shown))
        given = step.get("with") or {}
        for name, value in given.items() if isinstance(given, dict) else []:
            name = str(name)
            if name not in DEFAULTS or name in PREVIEW_OWNED:
                continue
            text = str(value).lower() if isinstance(value, bool) else str(value)
            if "${{" in text:
                found.skipped.append(name)
            else:
                found.inputs[name] = text
        return found
    return WorkflowInputs(None)


def placeholder_uses(root: Path) -> list[str]:
    """One warning per workflow line that still runs the placeholder action init writes: GitHub
    finds no such repository, so that workflow fails before it gates anything."""
    warnings = []
    for path in sorted(p for p in (root / WORKFLOW_DIR).glob("*") if p.suffix in (".yml", ".yaml")):
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        for line in names_placeholder(text):
            warnings.append(f"{path.relative_to(root)}:{line} runs `{DEFAULT_ACTION}`, a placeholder no repository "
                            "answers: on GitHub this workflow fails before it gates. Point it at your copy of the "
                            "action: rubric-gate init --action you/rubric-gate@<commit sha>")
    return warnings
