"""The stored-call cache: a question asked once per key, its answer kept and reused.

A key names who answered (model), under which prompt version, about what (a check text, a
pair id, a group name) and in which context (a hash of whatever else the prompt showed). The
cache is any store with `find` and `record` by those five parts (the answer store beside the
verdicts, `rubric_gate.audit.store.AuditStore`); a rerun with the same key makes no call.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Protocol

from rubric_gate.llm.asks import Ask, CallStats
from rubric_gate.llm.protocols import JudgeRequest


class CallCache(Protocol):
    def find(self, kind: str, model: str, prompt: str, check_text: str, context: str) -> Any: ...

    def record(self, kind: str, model: str, prompt: str, check_text: str, context: str,
               result: dict[str, Any], input_tokens: int = 0, output_tokens: int = 0) -> Any: ...


@dataclass(frozen=True)
class CallKey:
    kind: str  # structure | grounding | repair | teach | ...
    model: str
    prompt: str  # the prompt template's version
    subject: str  # what is asked about: a check text, a pair id, a group name
    context: str  # hash of everything else the prompt shows

    def find(self, cache: CallCache) -> Any:
        return cache.find(self.kind, self.model, self.prompt, self.subject, self.context)


def stored_ask(cache: CallCache, key: CallKey, label: str, request: JudgeRequest,
               parse: Callable[[str], Any], to_result: Callable[[Any], dict[str, Any]]) -> Ask:
    """An Ask whose parsed answer is recorded under `key` the moment it arrives."""

    def done(value: Any, input_tokens: int, output_tokens: int) -> None:
        cache.record(key.kind, key.model, key.prompt, key.subject, key.context, to_result(value),
                     input_tokens, output_tokens)

    return Ask(label, request, parse, done)


def unstored(questions: Iterable[tuple[CallKey, Callable[[], Ask]]], cache: CallCache, stats: CallStats) -> list[Ask]:
    """The asks whose answer `cache` lacks, one per key (`make` runs only for those, so a stored
    answer costs no prompt rendering); each stored answer counts as reused in `stats`."""
    asks: list[Ask] = []
    seen: set[CallKey] = set()
    for key, make in questions:
        if key in seen:
            continue
        seen.add(key)
        if key.find(cache) is not None:
            stats.reused += 1
        else:
            asks.append(make())
    return asks
