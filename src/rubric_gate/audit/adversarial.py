"""Adversarial fool rate (after PReMISE's verified fool rate), per check.

An attacker writes N outputs for calibration inputs, each meant to get "yes" on the check while
failing the task; the judge answers the check with the production per-check prompt; a verifier
that sees neither the attack nor the judge's answer says whether each "yes" output genuinely
meets the check. VFR = verified fools / N. Every call is stored and reused like an audit.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from rubric_gate.audit.calls import Ask, CallStats, raise_failures, run_asks
from rubric_gate.audit.model import Fool
from rubric_gate.audit.parse import load_object, one_line, yes_no
from rubric_gate.audit.store import AuditStore, context_hash
from rubric_gate.audit.templates import render, template_version
from rubric_gate.calibration import CalibrationItem
from rubric_gate.judges.backend import JudgeRequest
from rubric_gate.judges.parse import ANSWER_SCHEMA, MalformedReply, parse_answer
from rubric_gate.judges.prompt import PROMPT_VERSION, as_text, render_per_check
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

ATTACK_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"output": {"type": "string"}},
    "required": ["output"],
    "additionalProperties": False,
}
VERIFY_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"meets_check": {"type": "string", "enum": ["yes", "no"]}, "reason": {"type": "string"}},
    "required": ["meets_check", "reason"],
    "additionalProperties": False,
}


def parse_attack(text: str) -> str:
    output = load_object(text, {"output"})["output"]
    if not isinstance(output, str) or not output.strip():
        raise MalformedReply("output must be a non-empty string")
    return output[:MAX_OUTPUT_CHARS]


def parse_verify(text: str) -> tuple[bool, str]:
    obj = load_object(text, {"meets_check", "reason"})
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


def _run(asks: list[Ask], model: str, role: str, store_reused: int, usage: list[CallStats], concurrency: int) -> None:
    stats = next((s for s in usage if s.model == model and s.role == role), None)
    if stats is None:
        stats = CallStats(model, role)
        usage.append(stats)
    stats.reused += store_reused
    run_asks(asks, model, stats, concurrency=concurrency)
    raise_failures([stats])


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
    asks, reused = [], 0
    for a in attempts:
        key = context_hash(task_key, a.context)
        if store.find("attack", attacker, attack_v, a.check.text, key) is not None:
            reused += 1
            continue
        prompt = render(PACKAGE, "attack.j2", task=task, input=a.item.input, check=a.check.text, strategy=a.strategy)

        def done(output: str, tin: int, tout: int, a: _Attempt = a, key: str = key) -> None:
            store.record("attack", attacker, attack_v, a.check.text, key, {"output": output}, tin, tout)

        asks.append(Ask(f"attack {a.index + 1} on {a.check.id}", JudgeRequest(prompt, ATTACK_SCHEMA, "attack_output",
                                                                              ATTACK_MAX_TOKENS), parse_attack, done))
    _run(asks, attacker, "attacker", reused, usage, concurrency)
    outputs: dict[int, str] = {}  # by id(attempt): a Check is not hashable
    for a in attempts:
        record = store.find("attack", attacker, attack_v, a.check.text, context_hash(task_key, a.context))
        assert record is not None
        outputs[id(a)] = str(record.result["output"])

    # 2. The judge answers the check, exactly as it would in production.
    def answer_key(a: _Attempt) -> str:
        return context_hash(task_key, a.item.input, outputs[id(a)])

    asks, reused = [], 0
    for a in attempts:
        if store.find("answer", judge, PROMPT_VERSION, a.check.text, answer_key(a)) is not None:
            reused += 1
            continue
        prompt = render_per_check(task, a.item.input, outputs[id(a)], a.check.text)

        def judged(answer: Any, tin: int, tout: int, a: _Attempt = a) -> None:
            store.record("answer", judge, PROMPT_VERSION, a.check.text, answer_key(a), {"answer": answer.answer}, tin, tout)

        asks.append(Ask(f"judge attack {a.index + 1} on {a.check.id}",
                        JudgeRequest(prompt, ANSWER_SCHEMA, "check_answer", 400), parse_answer, judged))
    _run(asks, judge, "judge", reused, usage, concurrency)

    def answered_yes(a: _Attempt) -> bool:
        record = store.find("answer", judge, PROMPT_VERSION, a.check.text, answer_key(a))
        assert record is not None  # _run raised if an attack went unanswered
        return bool(record.result["answer"] == "yes")

    said_yes = [a for a in attempts if answered_yes(a)]

    # 3. The verifier, blind to the attack and the answer, checks each "yes".
    verify_v = template_version(PACKAGE, "verify.j2")
    asks, reused = [], 0
    for a in said_yes:
        if store.find("verify", verifier, verify_v, a.check.text, answer_key(a)) is not None:
            reused += 1
            continue
        prompt = render(PACKAGE, "verify.j2", task=task, input=a.item.input, output=outputs[id(a)], check=a.check.text)

        def verified(result: tuple[bool, str], tin: int, tout: int, a: _Attempt = a) -> None:
            store.record("verify", verifier, verify_v, a.check.text, answer_key(a),
                         {"meets_check": result[0], "reason": result[1]}, tin, tout)

        asks.append(Ask(f"verify attack {a.index + 1} on {a.check.id}",
                        JudgeRequest(prompt, VERIFY_SCHEMA, "verification", 400), parse_verify, verified))
    _run(asks, verifier, "verifier", reused, usage, concurrency)

    results: dict[str, tuple[int, list[Fool]]] = {c.id: (n, []) for c in checks}
    for a in said_yes:
        record = store.find("verify", verifier, verify_v, a.check.text, answer_key(a))
        assert record is not None
        if not record.result["meets_check"]:
            results[a.check.id][1].append(Fool(a.item.id, as_text(outputs[id(a)]), str(record.result["reason"])))
    return results, usage
