"""What `init` writes (pure), and writing it without ever replacing a file."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from rubric_gate.schema import render_schema

FILES_DIR = Path(__file__).resolve().parent / "files"
# `\Z`, not `$`: `$` also matches before a trailing newline, which would reach a file name or a `uses:` line.
NAME_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*\Z")
# The placeholder init writes until it is told the user's copy: no repository answers it.
DEFAULT_ACTION = "OWNER/rubric-gate@v1"
# What `uses:` accepts for an action in another repository: OWNER/REPO[/PATH]@REF.
ACTION_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9-]*/[A-Za-z0-9._-]+(/[A-Za-z0-9._/-]+)?@[A-Za-z0-9._/-]+\Z")
WORKFLOW_PATH = ".github/workflows/rubric-gate.yml"
# Posts the comment for fork PRs from the artifact the first workflow uploads: both or neither.
COMMENT_WORKFLOW_PATH = ".github/workflows/rubric-gate-comment.yml"
# Optional (`init --drift`): the judge asked again weekly on a sample of its stored verdicts.
DRIFT_WORKFLOW_PATH = ".github/workflows/rubric-gate-drift.yml"
SHA_PINNED = re.compile(r"@[0-9a-f]{40}$")
# zizmor asks for every action pinned by commit; the user's own copy has no release to pin yet.
UNPINNED_NOTE = "# zizmor: ignore[unpinned-uses] your copy of rubric-gate: pin it by commit once published"


@dataclass(frozen=True)
class ScaffoldFile:
    path: str  # relative to the repository root
    content: str


def check_action(action: str) -> None:
    """`action` as a workflow's `uses:` names an action in another repository (ValueError if not)."""
    if not ACTION_PATTERN.match(action):
        raise ValueError(f"{action!r} is not OWNER/REPO@REF (e.g. you/rubric-gate@<commit sha> for your copy)")


def uses_line(action: str) -> str:
    """The value init writes after `uses:` (a tag or branch carries zizmor's note: pin it)."""
    return f"{action}" if SHA_PINNED.search(action) else f"{action}  {UNPINNED_NOTE}"


def workflow_template(action: str = DEFAULT_ACTION) -> str:
    """The repository's own copy-paste workflow (a copy is package data, tested equal to
    .github/workflows/rubric-gate.yml), pointed at the published action instead of `./`."""
    text = (FILES_DIR / "rubric-gate.yml").read_text(encoding="utf-8")
    text = text.replace("# Runs this repository's own action (from ./) on", "# Runs rubric-gate on", 1)
    # In a user's repository there is no bundled example: say what happens without a judge.
    text = text.replace("# the bundled example replays recorded verdicts",
                        "# without a judge, recorded verdicts are replayed")
    line = uses_line(action)
    return re.sub(r"(?m)^(\s*uses:)\s+\./(\s+#.*)?$", lambda m: f"{m.group(1)} {line}", text)


def drift_workflow_template(action: str = DEFAULT_ACTION) -> str:
    """The weekly drift workflow, installing rubric-gate from the same repository and ref as the
    action (`OWNER/REPO@REF` -> `git+https://github.com/OWNER/REPO@REF`)."""
    text = (FILES_DIR / "rubric-gate-drift.yml").read_text(encoding="utf-8")
    repository, _, ref = action.partition("@")
    return text.replace("git+https://github.com/OWNER/rubric-gate@v1", f"git+https://github.com/{repository}@{ref or 'main'}")


_RUBRIC = """\
# yaml-language-server: $schema=rubric.schema.json
# A checklist rubric for an LLM judge. rubric-gate scores every edit of it on the labeled
# calibration set and rejects check edits that drift it (see `rubric-gate check --help`).
id: {name}
version: 1
task: >-
  Describe what the graded output must do, in the words the judge should see. Example: answer
  the user's question from the given document only, citing the section each fact comes from.
calibration: calibration/{name}.jsonl
verdicts: calibration/{name}.verdicts.jsonl
# judge: anthropic:claude-sonnet-4-6   # optional: judge new checks live; else verdicts are replayed
aggregation: all-pass                 # or {{max_failures: 1}}: pass with at most one "no"
checks:
  - id: answers-the-question
    text: "The output answers the question the input asks, not a different or broader one."
    origin: hand                       # hand | generated | review | label
    source: "written with the task, v1"
  - id: no-invented-facts
    text: "Every fact the output states is supported by the input document."
    origin: hand
  - id: cites-sections
    text: "Every fact the output states names the section of the document it comes from."
    origin: label                      # derived from human labels: frozen unless frozen: false
    frozen: true
    source: [ex-3]
"""

_CALIBRATION_ITEMS = [
    {"id": "ex-1", "input": {"question": "How long is the warranty?", "document": "Section 2: The warranty lasts 24 months."},
     "output": "The warranty lasts 24 months (section 2).", "label": "pass", "split": "calibration"},
    {"id": "ex-2", "input": {"question": "How long is the warranty?", "document": "Section 2: The warranty lasts 24 months."},
     "output": "The warranty lasts 36 months and covers water damage (section 2).", "label": "fail",
     "flaw": "invented-fact", "meta": {"annotator": "ana", "batch": 1}},
    {"id": "ex-3", "input": {"question": "Who pays for returns?", "document": "Section 5: The buyer pays return shipping."},
     "output": "The buyer pays return shipping.", "label": "fail", "flaw": "unplanned"},
    {"id": "ex-4", "input": {"question": "Who pays for returns?", "document": "Section 5: The buyer pays return shipping."},
     "output": "Return shipping is paid by the buyer (section 5).", "label": "pass", "split": "evaluation"},
]


def scaffold_files(name: str, action: str = DEFAULT_ACTION, *, drift: bool = False) -> list[ScaffoldFile]:
    """The rubric, its schema for editors, a calibration template showing every field, the workflows
    (with `drift`, the weekly drift workflow too)."""
    if not NAME_PATTERN.match(name):
        raise ValueError(f"rubric name {name!r} must use letters, digits, '_', '.', '-' and start with a letter or digit")
    calibration = "".join(json.dumps(item, ensure_ascii=False) + "\n" for item in _CALIBRATION_ITEMS)
    return [
        ScaffoldFile(f"rubrics/{name}.yaml", _RUBRIC.format(name=name)),
        ScaffoldFile("rubrics/rubric.schema.json", render_schema("rubric.schema.json")),
        ScaffoldFile(f"calibration/{name}.jsonl", calibration),
        ScaffoldFile(WORKFLOW_PATH, workflow_template(action)),
        ScaffoldFile(COMMENT_WORKFLOW_PATH, (FILES_DIR / "rubric-gate-comment.yml").read_text(encoding="utf-8")),
        *([ScaffoldFile(DRIFT_WORKFLOW_PATH, drift_workflow_template(action))] if drift else []),
    ]


def write_new_files(root: Path, files: list[ScaffoldFile]) -> tuple[list[str], list[str]]:
    """Create each file that does not exist yet; returns (created, skipped). Never overwrites."""
    created, skipped = [], []
    for file in files:
        target = root / file.path
        target.parent.mkdir(parents=True, exist_ok=True)
        try:
            with target.open("x", encoding="utf-8", newline="\n") as handle:  # "x": fail if it exists
                handle.write(file.content)
        except FileExistsError:
            skipped.append(file.path)
            continue
        created.append(file.path)
    return created, skipped


def next_steps(name: str, action: str = DEFAULT_ACTION, created: list[str] | None = None,
               placeholder: bool | None = None, *, rubric: bool = True) -> list[str]:
    """What to do after `init`; `created` (default: everything) are the files it wrote this time,
    so a second run does not ask to replace example items that are long gone. `placeholder`: the
    workflow still names DEFAULT_ACTION (default: init wrote it now with the placeholder).
    `rubric`: false when init only pointed the workflows at an action (no rubric NAME to record)."""
    created = [f.path for f in scaffold_files(name, action)] if created is None else created
    if placeholder is None:
        placeholder = WORKFLOW_PATH in created and action == DEFAULT_ACTION
    steps = []
    wrote = [p for p in (f"calibration/{name}.jsonl", f"rubrics/{name}.yaml") if p in created]
    if f"calibration/{name}.jsonl" in created:
        steps.append(f"Replace the example items in calibration/{name}.jsonl with outputs your team labeled "
                     "pass or fail" + (f", and write your task and checks in rubrics/{name}.yaml." if len(wrote) == 2
                                       else "."))
    elif f"rubrics/{name}.yaml" in created:
        steps.append(f"Write your task and checks in rubrics/{name}.yaml.")
    if rubric:
        steps.append(
            f"Record a verdict for every (check, item) pair: rubric-gate judge --rubric rubrics/{name}.yaml "
            f"--verdicts calibration/{name}.verdicts.jsonl --judge anthropic:MODEL, or by hand, one line per pair in "
            f"calibration/{name}.verdicts.jsonl: "
            '{"item": "ex-1", "check_text": "<the check\'s text, as written>", "answer": "yes"} ("no" where it fails); '
            f"rubric-gate lint rubrics/{name}.yaml lists the pairs still missing.")
    if placeholder:
        steps.append(f"Point {WORKFLOW_PATH} at your copy of the action: it names the placeholder {DEFAULT_ACTION}, "
                     "which no repository answers. Fork this repository (or use it as a template), then run "
                     "rubric-gate init --action you/rubric-gate@<commit sha>; commit, push, and require the "
                     "rubric-gate check on your default branch.")
    else:
        steps.append("Commit and push, then require the rubric-gate check on your default branch.")
    if DRIFT_WORKFLOW_PATH in created:
        steps.append(f"{DRIFT_WORKFLOW_PATH} asks each rubric's `judge` again every week: set its API key as a "
                     "repository secret (ANTHROPIC_API_KEY or OPENAI_API_KEY), or delete the file.")
    steps.append("Edit the rubric on a branch, commit, and run rubric-gate preview --base main: the comment the "
                 "action would post on that PR, offline, before you push.")
    return steps
