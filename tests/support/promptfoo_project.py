"""A promptfoo config with six llm-rubric assertions, gated in place, and the same checklist as a
native rubric: one repository holding both, with a calibration set and recorded verdicts.

The verdicts are laid out so that `cites-policy` alone catches F4 (a unique catch: deleting it
is rejected) and `uses-name`, which an edit adds, answers no on the correct item P2 (blame:
adding it is rejected).
"""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass
from pathlib import Path

CONFIG_PATH = "evals/promptfooconfig.yaml"
RUBRIC_PATH = "rubrics/support.yaml"  # the native rubric built from the same checks
TASK = "Answer the customer's refund question from the policy excerpt, politely and accurately."

CHECKS = {  # id -> text; the id comes from `metric`, except the slug one
    "answers-question": "The answer addresses the refund question the customer asked.",
    "refund-window": "The answer states the refund window from the policy correctly.",
    "polite": "The answer is polite and does not blame the customer.",
    "cites-policy": "The answer names the policy section it relies on.",
    "the-answer-makes-no-promise-the-policy-does-not": "The answer makes no promise the policy does not support.",
    "concise": "The answer is at most three sentences long.",
}
ADDED = ("uses-name", "The answer addresses the customer by the name they gave.")
FAILED_BY = {  # item -> the checks answering no
    "F1": {"answers-question"},
    "F2": {"refund-window"},
    "F3": {"polite", "the-answer-makes-no-promise-the-policy-does-not", "uses-name"},
    "F4": {"cites-policy"},
    "F5": {"the-answer-makes-no-promise-the-policy-does-not", "refund-window"},
    "F6": {"concise", "polite"},
    "P1": set(), "P2": {"uses-name"}, "P3": set(), "P4": set(), "P5": {"concise"},
}

BASE_CONFIG = """\
# yaml-language-server: $schema=https://promptfoo.dev/config-schema.json
description: Answer the customer's refund question from the policy excerpt, politely and accurately.
prompts:
  - "Customer: {{question}}\\nPolicy: {{policy}}\\nAnswer the customer."
providers:
  - openai:gpt-4o-mini
defaultTest:
  assert:
    - type: llm-rubric
      metric: answers-question
      value: The answer addresses the refund question the customer asked.
    - type: llm-rubric
      metric: refund-window
      value: The answer states the refund window from the policy correctly.
    - type: llm-rubric
      metric: polite
      value: The answer is polite and does not blame the customer.
    - type: llm-rubric
      metric: cites-policy
      value: The answer names the policy section it relies on.
    - type: llm-rubric
      value: The answer makes no promise the policy does not support.
    - type: javascript
      value: output.length < 1200
tests:
  - description: refund after 20 days
    vars:
      question: I bought shoes 20 days ago, can I still return them?
      policy: "Section 4: refunds within 30 days of purchase."
    assert:
      - type: contains
        value: 30 days
      - type: llm-rubric
        metric: concise
        value: The answer is at most three sentences long.
  - description: refund after 40 days
    vars:
      question: My name is Ana; I bought a coat 40 days ago. Refund?
      policy: "Section 4: refunds within 30 days of purchase."
    providerOutput: "Sorry Ana, section 4 allows refunds within 30 days only."
"""

# The branch's edit: delete the unique-catch check, add one with blame.
HEAD_CONFIG = BASE_CONFIG.replace("""\
    - type: llm-rubric
      metric: cites-policy
      value: The answer names the policy section it relies on.
""", """\
    - type: llm-rubric
      metric: uses-name
      value: The answer addresses the customer by the name they gave.
""")

SETTINGS = f"""\
promptfoo:
  {CONFIG_PATH}:
    id: support
    version: 1
    calibration: calibration/support.jsonl
    verdicts: calibration/support.verdicts.jsonl
"""


def native_rubric(checks: dict[str, str]) -> str:
    lines = [f"id: support\nversion: 1\ntask: {TASK}\ncalibration: calibration/support.jsonl\n"
             "verdicts: calibration/support.verdicts.jsonl\nchecks:\n"]
    lines += [f"  - id: {cid}\n    text: {text}\n" for cid, text in checks.items()]
    return "".join(lines)


def head_checks() -> dict[str, str]:
    checks = {cid: text for cid, text in CHECKS.items() if cid != "cites-policy"}
    ids = list(checks)
    # the added assertion sits where the deleted one was, before the slug one
    ids.insert(3, ADDED[0])
    checks[ADDED[0]] = ADDED[1]
    return {cid: checks[cid] for cid in ids}


def calibration_lines() -> str:
    return "".join(json.dumps({"id": item, "input": f"question {item}", "output": f"answer {item}",
                               "label": "fail" if item.startswith("F") else "pass"}) + "\n" for item in FAILED_BY)


def verdict_lines() -> str:
    texts = {**CHECKS, ADDED[0]: ADDED[1]}
    return "".join(json.dumps({"item": item, "check_text": text, "answer": "no" if cid in failed else "yes"}) + "\n"
                   for item, failed in FAILED_BY.items() for cid, text in texts.items())


@dataclass
class PromptfooRepo:
    root: Path

    def write(self, relative: str, text: str) -> Path:
        path = self.root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        return path

    def git(self, *args: str) -> str:
        return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=self.root,
                              capture_output=True, text=True, check=True).stdout

    def commit(self, message: str) -> None:
        self.git("add", "-A")
        self.git("commit", "-qm", message)

    def line_of(self, relative: str, needle: str, *, after: str | None = None) -> int:
        """1-based line of the first line containing `needle` (after the line containing `after`)."""
        lines = (self.root / relative).read_text(encoding="utf-8").splitlines()
        start = next(i for i, line in enumerate(lines) if after in line) if after else 0
        return next(i for i, line in enumerate(lines) if i >= start and needle in line) + 1


def make_repo(root: Path, *, branch: bool = True) -> PromptfooRepo:
    """main: the config, its settings and the native rubric; with `branch`, HEAD on `edit`,
    which deletes `cites-policy` and adds `uses-name` in both."""
    root.mkdir(parents=True, exist_ok=True)
    repo = PromptfooRepo(root)
    repo.git("init", "-q", "-b", "main")
    repo.write(CONFIG_PATH, BASE_CONFIG)
    repo.write(".rubric-gate.yaml", SETTINGS)
    repo.write(RUBRIC_PATH, native_rubric(CHECKS))
    repo.write("calibration/support.jsonl", calibration_lines())
    repo.write("calibration/support.verdicts.jsonl", verdict_lines())
    repo.commit("support checks")
    if branch:
        repo.git("switch", "-qc", "edit")
        repo.write(CONFIG_PATH, HEAD_CONFIG)
        repo.write(RUBRIC_PATH, native_rubric(head_checks()))
        repo.commit("swap a check")
    return repo
