"""Audit checks: structure and grounding, one call per (check, property group) per judge,
each answer stored and reused; several judges decide by majority."""

from __future__ import annotations

import re
from collections.abc import Sequence

from rubric_gate.audit.model import CheckAudit
from rubric_gate.audit.parse import (
    GROUNDING_SCHEMA,
    PROPERTIES,
    STRUCTURE_SCHEMA,
    GroundingAnswer,
    StructureAnswer,
    parse_grounding,
    parse_structure,
)
from rubric_gate.audit.store import AuditStore, context_hash
from rubric_gate.audit.templates import render, template_source, template_version
from rubric_gate.errors import JudgeError
from rubric_gate.llm.asks import Ask, CallStats, raise_failures, run_asks
from rubric_gate.llm.cache import CallKey, stored_ask
from rubric_gate.llm.protocols import JudgeRequest, shared_until
from rubric_gate.llm.replies import comparable, copies
from rubric_gate.llm.spec import parse_judge_spec
from rubric_gate.rubric import Check, normalize_text

PACKAGE = "rubric_gate.audit"
STRUCTURE_MAX_TOKENS = 800
GROUNDING_MAX_TOKENS = 400


def structure_prompt_version() -> str:
    return template_version(PACKAGE, "structure.j2")


def grounding_prompt_version() -> str:
    return template_version(PACKAGE, "grounding.j2")


def task_context(task: str) -> str:
    return context_hash("task", normalize_text(task))


def _structure_ask(store: AuditStore, judge: str, task: str, check: Check) -> Ask:
    key = CallKey("structure", judge, structure_prompt_version(), check.text, task_context(task))
    prompt = render(PACKAGE, "structure.j2", task=task, check=check.text)
    request = JudgeRequest(prompt, STRUCTURE_SCHEMA, "check_structure", STRUCTURE_MAX_TOKENS,
                           shared_prefix=shared_until(prompt, "<check>"))  # the task, shared by every check
    return stored_ask(store, key, f"structure of {check.id}", request, parse_structure, StructureAnswer.to_result)


def _grounding_ask(store: AuditStore, judge: str, task: str, check: Check) -> Ask:
    key = CallKey("grounding", judge, grounding_prompt_version(), check.text, task_context(task))

    def parse(text: str) -> GroundingAnswer:
        return parse_grounding(text, task, check.text)

    prompt = render(PACKAGE, "grounding.j2", task=task, check=check.text)
    request = JudgeRequest(prompt, GROUNDING_SCHEMA, "check_grounding", GROUNDING_MAX_TOKENS,
                           shared_prefix=shared_until(prompt, "<check>"))
    return stored_ask(store, key, f"grounding of {check.id}", request, parse, GroundingAnswer.to_result)


def uninformative_structure(answers: Sequence[StructureAnswer], instructions: str) -> str | None:
    """Why one judge's structure audits carry no information, with the figures; or None. A reason
    says nothing when it has no word ("..."), copies the prompt's own words, or is the same
    sentence given for several properties of one check ("this is a very important one" for all
    five): such a judge's holds/fails rest on nothing it can show, as a judge answering "yes" to
    every pair. Half the reasons (at least five) saying nothing names the judge."""
    empty = copied = repeated = 0
    for answer in answers:
        said = [comparable(answer.reasons[name]) for name in PROPERTIES]
        for text in said:
            if len(re.findall(r"[^\W\d_]{2,}", text)) == 0:
                empty += 1
            elif copies(text, instructions, min_chars=8):
                copied += 1
            elif said.count(text) > 1:
                repeated += 1
    total, blank = len(answers) * len(PROPERTIES), empty + copied + repeated
    if total < 5 or 2 * blank < total:
        return None
    held = sum(sum(a.holds.values()) for a in answers)
    parts = [f"{n} {what}" for n, what in ((empty, "without a word"), (copied, "copying the prompt's own words"),
                                           (repeated, "one sentence repeated for several properties of a check")) if n]
    return (f"{blank} of its {total} structure reasons say nothing ({', '.join(parts)}); "
            f"it found {held} of the {total} properties holding")


def _majority(votes: Sequence[bool]) -> bool:
    """Holds unless a strict majority says it does not: a tie gives the check the benefit of the doubt."""
    return 2 * sum(votes) >= len(votes)


def _combine(check: Check, line: int | None, judges: Sequence[str],
             structures: Sequence[StructureAnswer], groundings: Sequence[GroundingAnswer]) -> CheckAudit:
    structure: dict[str, bool] = {}
    reasons: dict[str, str] = {}
    for name in PROPERTIES:
        holds = _majority([s.holds[name] for s in structures])
        structure[name] = holds
        reasons[name] = next(s for s in structures if s.holds[name] == holds).reasons[name]
    grounded = _majority([g.grounded for g in groundings])
    chosen = next(g for g in groundings if g.grounded == grounded)
    votes = {
        judge: {**s.holds, "grounded": g.grounded}
        for judge, s, g in zip(judges, structures, groundings, strict=True)
    }
    return CheckAudit(check.id, check.text, line, structure, reasons, grounded, chosen.quote, chosen.reason,
                      tuple(judges), votes)


def audit_checks(
    task: str,
    checks: Sequence[Check],
    judges: Sequence[str],
    store: AuditStore,
    *,
    check_lines: dict[str, int] | None = None,
    concurrency: int = 8,
    partial: bool = False,
) -> tuple[list[CheckAudit], list[CallStats]]:
    """Audit `checks` with every judge (majority), asking only what `store` lacks.

    With no judges, replays whatever the store holds from any model under the current prompts,
    and raises JudgeError naming the checks it has nothing for. Judge failures raise JudgeError
    after the run, with every good answer saved; with `partial`, they stay listed in the
    statistics' `failures` and the audits of the checks every judge answered are returned.
    """
    lines = check_lines or {}
    judges = list(dict.fromkeys(judges))
    if not judges:
        return _replay(task, checks, store, lines), []
    for judge in judges:
        parse_judge_spec(judge)
    structure_v, grounding_v, context = structure_prompt_version(), grounding_prompt_version(), task_context(task)
    usage: list[CallStats] = []
    for judge in judges:
        stats = CallStats(judge, "audit")
        asks, asked = [], set()
        for check in checks:
            for kind, version, make in (("structure", structure_v, _structure_ask), ("grounding", grounding_v, _grounding_ask)):
                if store.find(kind, judge, version, check.text, context) is not None:
                    stats.reused += 1
                elif (kind, check.normalized_text) not in asked:  # two checks with one text: one call
                    asked.add((kind, check.normalized_text))
                    asks.append(make(store, judge, task, check))
        usage.append(stats)
        try:
            run_asks(asks, judge, stats, concurrency=concurrency)
        except JudgeError as exc:  # this judge's endpoint or key: with `partial`, the other judges still answer
            if not partial:
                raise
            stats.failures.append(f"{judge}: {exc.message}")
            stats.causes["judge not callable"] = stats.causes.get("judge not callable", 0) + 1
    if not partial:
        raise_failures(usage)
    instructions = template_source(PACKAGE, "structure.j2")
    for judge, stats in zip(judges, usage, strict=True):
        answers = [StructureAnswer.from_result(r.result) for check in checks
                   if (r := store.find("structure", judge, structure_v, check.text, context)) is not None]
        stats.uninformative = uninformative_structure(answers, instructions) or ""
    audits = []
    for check in checks:
        structures, groundings = [], []
        for judge in judges:
            s = store.find("structure", judge, structure_v, check.text, context)
            g = store.find("grounding", judge, grounding_v, check.text, context)
            if s is None or g is None:  # unanswered (partial): no audit for this check
                break
            structures.append(StructureAnswer.from_result(s.result))
            groundings.append(GroundingAnswer.from_result(g.result))
        else:
            audits.append(_combine(check, lines.get(check.id), judges, structures, groundings))
    return audits, usage


def _replay(task: str, checks: Sequence[Check], store: AuditStore, lines: dict[str, int]) -> list[CheckAudit]:
    structure_v, grounding_v, context = structure_prompt_version(), grounding_prompt_version(), task_context(task)
    audits, missing = [], []
    for check in checks:
        s_records = {r.model: r for r in store.find_any_model("structure", structure_v, check.text, context)}
        g_records = {r.model: r for r in store.find_any_model("grounding", grounding_v, check.text, context)}
        judges = sorted(set(s_records) & set(g_records))
        if not judges:
            missing.append(check.id)
            continue
        audits.append(_combine(
            check, lines.get(check.id), judges,
            [StructureAnswer.from_result(s_records[j].result) for j in judges],
            [GroundingAnswer.from_result(g_records[j].result) for j in judges],
        ))
    if missing:
        raise JudgeError(
            f"no stored audit for checks {', '.join(missing)}; pass --judge PROVIDER:MODEL to audit them"
        )
    return audits
