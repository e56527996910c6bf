"""A gated rubric asked from another eval tool: each check with rubric-gate's own per-check
prompt, the replies read by its strict parser, the output graded all-must-pass (or at most K
failures), and each answer a verdict with the same full key a live `rubric-gate judge` writes,
so it can be appended to the rubric's verdict store and feed the next gate.

No third-party import here: `inspect_ai.py` and `deepeval.py` adapt this to their tools.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from rubric_gate.calibration.model import item_content_hash
from rubric_gate.errors import InputError
from rubric_gate.judges.parse import ANSWER_SCHEMA, parse_answer
from rubric_gate.judges.prompt import PROMPT_VERSION, render_per_check
from rubric_gate.judges.runner import PER_CHECK_MAX_TOKENS
from rubric_gate.llm.errors import MalformedReply
from rubric_gate.rubric import Check, Rubric, RubricDocument, load_rubric
from rubric_gate.verdicts import Verdict, task_hash
from rubric_gate.verdicts.store import VerdictWriter

# How often a check is asked again when its reply does not parse (the live judge's rule too:
# a reply is never guessed, and a pair still unanswered after this is reported as such).
ATTEMPTS = 3
REPLY_SCHEMA: dict[str, Any] = ANSWER_SCHEMA
REPLY_NAME = "check_answer"
MAX_TOKENS = PER_CHECK_MAX_TOKENS


@dataclass(frozen=True)
class CheckAnswer:
    """One check's answer for one output; `answer` is None when no reply parsed."""

    check: str
    text: str
    answer: str | None
    quote: str = ""
    error: str | None = None
    attempts: int = 1

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"text": self.text, "answer": self.answer, "quote": self.quote}
        if self.error is not None:
            out["error"] = self.error
        return out


@dataclass(frozen=True)
class Graded:
    """An output graded by a checklist: passed, failed, or undecided (unanswered checks could
    change the outcome, so it is not guessed)."""

    rubric: str
    answers: tuple[CheckAnswer, ...]
    max_failures: int = 0

    @property
    def failed(self) -> list[str]:
        return [a.check for a in self.answers if a.answer == "no"]

    @property
    def unanswered(self) -> list[str]:
        return [a.check for a in self.answers if a.answer is None]

    @property
    def passed(self) -> bool | None:
        failures, unknown = len(self.failed), len(self.unanswered)
        if failures > self.max_failures:
            return False
        if failures + unknown <= self.max_failures:
            return True
        return None

    @property
    def score(self) -> float | None:
        passed = self.passed
        return None if passed is None else float(passed)

    @property
    def reason(self) -> str:
        total = len(self.answers)
        rule = "all must pass" if self.max_failures == 0 else f"at most {self.max_failures} may fail"
        failing = ", ".join(self.failed)
        if self.passed is None:
            return (f"undecided: no valid answer for {', '.join(self.unanswered)}"
                    + (f"; failing: {failing}" if failing else "") + f" ({rule})")
        if self.passed:
            said_no = f"; no on {failing}" if failing else ""
            return f"passed: {total - len(self.failed)} of {total} checks say yes{said_no} ({rule})"
        return f"failed: no on {failing} ({rule})"

    def metadata(self) -> dict[str, Any]:
        return {"rubric": self.rubric, "prompt": PROMPT_VERSION, "max_failures": self.max_failures,
                "passed": self.passed, "failed": self.failed, "unanswered": self.unanswered,
                "checks": {a.check: a.to_dict() for a in self.answers}}


Ask = Callable[[str], Awaitable[str]]


@dataclass
class GatedChecklist:
    """A rubric (or a promptfoo config gated as one) ready to grade outputs."""

    rubric: Rubric
    max_failures: int = 0
    display: str = "<rubric>"
    verdicts: Path | None = None  # where `record` appends verdicts
    judge: str | None = None  # the key verdicts are recorded under, e.g. openai:gpt-4o-mini

    @classmethod
    def load(cls, rubric: str | Path | RubricDocument | Rubric, *, max_failures: int | None = None,
             verdicts: str | Path | None = None, judge: str | None = None) -> GatedChecklist:
        """From a rubric file, a promptfoo config (through `.rubric-gate.yaml`) or a loaded rubric.

        `max_failures` overrides the rubric's aggregation; `verdicts` is a verdict store to append
        every answer to, keyed under `judge` (needed then: the key a later gate looks verdicts up by)."""
        if isinstance(rubric, Rubric):
            doc_rubric, display = rubric, rubric.id
        else:
            doc = rubric if isinstance(rubric, RubricDocument) else load_rubric(rubric)
            doc_rubric, display = doc.rubric, doc.display
        k = doc_rubric.max_failures if max_failures is None else max_failures
        if k < 0 or k >= len(doc_rubric.checks):
            raise InputError(display, f"max_failures must be between 0 and {len(doc_rubric.checks) - 1} "
                             f"(the rubric has {len(doc_rubric.checks)} checks), got {k}")
        if verdicts is not None and not judge:
            raise InputError(str(verdicts), "recording verdicts needs the judge they are keyed under, "
                             "PROVIDER:MODEL (judge=...)")
        return cls(doc_rubric, k, display, Path(verdicts) if verdicts is not None else None, judge)

    @property
    def checks(self) -> list[Check]:
        return list(self.rubric.checks)

    def prompt(self, check: Check, item_input: Any, item_output: Any) -> str:
        """rubric-gate's per-check prompt for one (check, output)."""
        return render_per_check(self.rubric.task, item_input, item_output, check.text)

    async def ask_check(self, ask: Ask, check: Check, item_input: Any, item_output: Any) -> CheckAnswer:
        prompt = self.prompt(check, item_input, item_output)
        errors: list[str] = []
        for _ in range(ATTEMPTS):
            answer = _read(check, await ask(prompt), errors)
            if answer is not None:
                return answer
        return _unanswered(check, errors)

    def ask_check_sync(self, ask: Callable[[str], str], check: Check, item_input: Any, item_output: Any) -> CheckAnswer:
        prompt = self.prompt(check, item_input, item_output)
        errors: list[str] = []
        for _ in range(ATTEMPTS):
            answer = _read(check, ask(prompt), errors)
            if answer is not None:
                return answer
        return _unanswered(check, errors)

    async def grade(self, ask: Ask, item_input: Any, item_output: Any) -> Graded:
        """Ask every check (concurrently) and aggregate."""
        answers = await asyncio.gather(*(self.ask_check(ask, c, item_input, item_output) for c in self.checks))
        return self.graded(answers)

    def grade_sync(self, ask: Callable[[str], str], item_input: Any, item_output: Any) -> Graded:
        """Ask every check in turn (for tools that call a model synchronously) and aggregate."""
        return self.graded([self.ask_check_sync(ask, c, item_input, item_output) for c in self.checks])

    def graded(self, answers: Sequence[CheckAnswer]) -> Graded:
        return Graded(self.rubric.id, tuple(answers), self.max_failures)

    def to_verdicts(self, graded: Graded, item_id: str, item_input: Any, item_output: Any,
                    judge: str | None = None) -> list[Verdict]:
        """The answered checks as verdicts under the live judge's full key (judge, prompt version,
        task, check text, item content): `check --judge JUDGE` reuses them."""
        judge = judge or self.judge
        if not judge:
            raise InputError(self.display, "a verdict needs the judge it is keyed under, PROVIDER:MODEL")
        at = datetime.now(UTC).isoformat(timespec="seconds")
        content = item_content_hash(item_input, item_output)
        task = task_hash(self.rubric.task)
        return [Verdict(item=item_id, check_text=a.text, answer=a.answer, judge=judge, prompt=PROMPT_VERSION,  # type: ignore[arg-type]
                        item_hash=content, task_hash=task, check=a.check, quote=a.quote or None, at=at)
                for a in graded.answers if a.answer is not None]

    def record(self, graded: Graded, item_id: str, item_input: Any, item_output: Any) -> int:
        """Append the answered checks to `verdicts` (a no-op without one); returns how many."""
        if self.verdicts is None:
            return 0
        verdicts = self.to_verdicts(graded, item_id, item_input, item_output)
        with VerdictWriter(self.verdicts) as writer:  # whole lines under a lock, a torn tail repaired first
            writer.write(verdicts)
        return len(verdicts)


def _read(check: Check, reply: str, errors: list[str]) -> CheckAnswer | None:
    try:
        parsed = parse_answer(reply)
    except MalformedReply as exc:
        errors.append(str(exc))
        return None
    return CheckAnswer(check.id, check.text, parsed.answer, parsed.quote, attempts=len(errors) + 1)


def _unanswered(check: Check, errors: list[str]) -> CheckAnswer:
    return CheckAnswer(check.id, check.text, None, error=f"no valid reply in {ATTEMPTS} attempts ({errors[-1]})",
                       attempts=ATTEMPTS)


def judge_key(model_name: str) -> str:
    """rubric-gate's PROVIDER:MODEL for a tool's `provider/model` name (openai/gpt-4o -> openai:gpt-4o)."""
    provider, sep, model = model_name.partition("/")
    return f"{provider}:{model}" if sep and ":" not in model_name else model_name
