"""Adversarial fool rate (after PReMISE's verified fool rate), per check.

An attacker writes N outputs for calibration inputs, each meant to get "yes" on the check while
failing the task; the judge answers the check with the production per-check prompt; a verifier
that sees neither the attack nor the judge's answer says whether each "yes" output genuinely
meets the check. VFR = verified fools / N. Every call is stored and reused like an audit.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any, cast

from rubric_gate.audit.model import Fool
from rubric_gate.audit.parse import REASON, one_line, yes_no
from rubric_gate.audit.store import AuditRecord, AuditStore, context_hash
from rubric_gate.audit.templates import render, template_version
from rubric_gate.calibration import CalibrationItem
from rubric_gate.judges.parse import ANSWER_SCHEMA, parse_answer
from rubric_gate.judges.prompt import PROMPT_VERSION, as_text, render_per_check
from rubric_gate.llm.asks import Ask, CallStats, raise_failures, run_asks
from rubric_gate.llm.cache import CallKey, stored_ask, unstored
from rubric_gate.llm.errors import MalformedReply
from rubric_gate.llm.protocols import JudgeRequest
from rubric_gate.llm.replies import YES_NO, reply_object, short_text, strict_object
from rubric_gate.rubric import Check

PACKAGE = "rubric_gate.audit"
MAX_OUTPUT_CHARS = 8000
ATTACK_MAX_TOKENS = 2000

# Rotated over the attempts: each names a way a check's wording can be satisfied without the substance.
STRATEGIES = (
    "echo the check's own words and vocabulary prominently without actually doing what they describe",
    "use confident structure and formatting (headings, lists, labels) around thin or wrong content",
    "state things with certainty that are wrong or unsupported by the input",
    "do a small, easy part of what is asked and present it as complete",
    "hedge and generalise so nothing concrete can be checked",
    "add long, plausible detail that is beside the point of the task",
)

ATTACK_SCHEMA: dict[str, Any] = strict_object({"output": short_text(MAX_OUTPUT_CHARS)})
VERIFY_SCHEMA: dict[str, Any] = strict_object({"meets_check": YES_NO, "reason": REASON})


def parse_attack(text: str) -> str:
    output = reply_object(text, {"output"})["output"]
    if not isinstance(output, str) or not output.strip():
        raise MalformedReply("output must be a non-empty string")
    return output[:MAX_OUTPUT_CHARS]


def parse_verify(text: str) -> tuple[bool, str]:
    obj = reply_object(text, {"meets_check", "reason"})
    return yes_no(obj["meets_check"], "meets_check"), one_line(obj["reason"], "reason")


@dataclass(frozen=True)
class _Attempt:
    check: Check
    item: CalibrationItem
    strategy: str
    index: int

    @property
    def context(self) -> str:
        return context_hash("attack", self.index, self.strategy, self.item.content_hash)


def _stats(usage: list[CallStats], model: str, role: str) -> CallStats:
    stats = next((s for s in usage if s.model == model and s.role == role), None)
    if stats is None:
        stats = CallStats(model, role)
        usage.append(stats)
    return stats


def _ask_missing(questions: Iterable[tuple[CallKey, Callable[[], Ask]]], store: AuditStore, model: str, role: str,
                 usage: list[CallStats], concurrency: int) -> None:
    """Ask what `store` lacks (each answer recorded as it arrives); raise if any stays unanswered."""
    stats = _stats(usage, model, role)
    run_asks(unstored(questions, store, stats), model, stats, concurrency=concurrency)
    raise_failures([stats])


def _stored(store: AuditStore, key: CallKey) -> AuditRecord:
    record = key.find(store)
    assert record is not None  # _ask_missing raised if a call went unanswered
    return cast(AuditRecord, record)


def fool_rates(
    task: str,
    checks: Sequence[Check],
    items: Sequence[CalibrationItem],
    n: int,
    *,
    attacker: str,
    judge: str,
    verifier: str,
    store: AuditStore,
    concurrency: int = 8,
) -> tuple[dict[str, tuple[int, list[Fool]]], list[CallStats]]:
    """{check id: (N, fools)} and the cost of the three roles. Inputs cycle through `items`."""
    usage: list[CallStats] = []
    if n <= 0 or not checks or not items:
        return {}, usage
    attempts = [_Attempt(check, items[i % len(items)], STRATEGIES[i % len(STRATEGIES)], i)
                for check in checks for i in range(n)]
    task_key = context_hash("task", " ".join(task.split()))

    # 1. The attacker writes the outputs.
    attack_v = template_version(PACKAGE, "attack.j2")

    def attack_key(a: _Attempt) -> CallKey:
        return CallKey("attack", attacker, attack_v, a.check.text, context_hash(task_key, a.context))

    def attack(a: _Attempt) -> Ask:
        prompt = render(PACKAGE, "attack.j2", task=task, input=a.item.input, check=a.check.text, strategy=a.strategy)
        return stored_ask(store, attack_key(a), f"attack {a.index + 1} on {a.check.id}",
                          JudgeRequest(prompt, ATTACK_SCHEMA, "attack_output", ATTACK_MAX_TOKENS), parse_attack,
                          lambda output: {"output": output})

    _ask_missing(((attack_key(a), partial(attack, a)) for a in attempts), store, attacker, "attacker", usage,
                 concurrency)
    outputs: dict[int, str] = {}  # by id(attempt): a Check is not hashable
    for a in attempts:
        outputs[id(a)] = str(_stored(store, attack_key(a)).result["output"])

    # 2. The judge answers the check, exactly as it would in production.
    def answer_context(a: _Attempt) -> str:
        return context_hash(task_key, a.item.input, outputs[id(a)])

    def answer_key(a: _Attempt) -> CallKey:
        return CallKey("answer", judge, PROMPT_VERSION, a.check.text, answer_context(a))

    def answer(a: _Attempt) -> Ask:
        prompt = render_per_check(task, a.item.input, outputs[id(a)], a.check.text)
        return stored_ask(store, answer_key(a), f"judge attack {a.index + 1} on {a.check.id}",
                          JudgeRequest(prompt, ANSWER_SCHEMA, "check_answer", 400), parse_answer,
                          lambda reply: {"answer": reply.answer})

    _ask_missing(((answer_key(a), partial(answer, a)) for a in attempts), store, judge, "judge", usage, concurrency)
    said_yes = [a for a in attempts if _stored(store, answer_key(a)).result["answer"] == "yes"]

    # 3. The verifier, blind to the attack and the answer, checks each "yes".
    verify_v = template_version(PACKAGE, "verify.j2")

    def verify_key(a: _Attempt) -> CallKey:
        return CallKey("verify", verifier, verify_v, a.check.text, answer_context(a))

    def verify(a: _Attempt) -> Ask:
        prompt = render(PACKAGE, "verify.j2", task=task, input=a.item.input, output=outputs[id(a)], check=a.check.text)
        return stored_ask(store, verify_key(a), f"verify attack {a.index + 1} on {a.check.id}",
                          JudgeRequest(prompt, VERIFY_SCHEMA, "verification", 400), parse_verify,
                          lambda result: {"meets_check": result[0], "reason": result[1]})

    _ask_missing(((verify_key(a), partial(verify, a)) for a in said_yes), store, verifier, "verifier", usage,
                 concurrency)

    results: dict[str, tuple[int, list[Fool]]] = {c.id: (n, []) for c in checks}
    for a in said_yes:
        record = _stored(store, verify_key(a))
        if not record.result["meets_check"]:
            results[a.check.id][1].append(Fool(a.item.id, as_text(outputs[id(a)]), str(record.result["reason"])))
    return results, usage
