"""Strict parsing of judge replies: a reply that is not exactly the expected object is rejected
(`rubric_gate.llm.errors.MalformedReply`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rubric_gate.llm.errors import MalformedReply
from rubric_gate.llm.replies import list_of, one_of, reply_object, short_text, strict_object
from rubric_gate.verdicts.model import AnswerWord

# The supporting quote is "the shortest passage" the answer rests on: bounded in the schema, so a
# provider that enforces it (llama.cpp, vLLM) cannot loop inside it until the token cap.
MAX_QUOTE_CHARS = 300
_ANSWER = one_of(["yes", "no", "n/a"])
ANSWER_SCHEMA: dict[str, Any] = strict_object({"answer": _ANSWER, "quote": short_text(MAX_QUOTE_CHARS)})


def checklist_schema(ids: list[str]) -> dict[str, Any]:
    """One answer per check id shown, each naming one of those ids (not a free string: a model
    copied the prompt's "the check id" into it)."""
    entry = strict_object({"id": one_of(ids), "answer": _ANSWER, "quote": short_text(MAX_QUOTE_CHARS)})
    return list_of("answers", entry, min_items=len(ids), max_items=len(ids))


@dataclass(frozen=True)
class Answer:
    answer: AnswerWord
    quote: str


def _answer(obj: Any, extra: frozenset[str] = frozenset()) -> Answer:
    if not isinstance(obj, dict):
        raise MalformedReply("answer entry is not an object")
    keys = set(obj)
    if keys != {"answer", "quote"} | extra:
        raise MalformedReply(f"unexpected keys {sorted(keys)}")
    answer = normalize_answer(obj["answer"])
    if answer is None:
        raise MalformedReply(f"answer must be 'yes', 'no' or 'n/a', got {obj['answer']!r}")
    if not isinstance(obj["quote"], str):
        raise MalformedReply("quote is not a string")
    # The schema's bound, for providers that ignore it: a longer quote is cut, never the answer
    # lost (a cut quote still occurs in the output exactly when the whole one does, or is kept
    # as unverified like it).
    return Answer(answer, obj["quote"][:MAX_QUOTE_CHARS])


def normalize_answer(value: Any) -> AnswerWord | None:
    """'yes'/'no'/'n/a' from an unambiguous spelling of one ("Yes", "NO.", " N/A "); else None.

    Only case, surrounding space and trailing punctuation are dropped: the word itself must be
    exactly yes, no or n/a, so nothing is guessed ("yes, but", "y" and "na" are still malformed).
    """
    if not isinstance(value, str):
        return None
    word = value.strip().rstrip(".!").strip().lower()
    return _ANSWER_WORDS.get(word)


_ANSWER_WORDS: dict[str, AnswerWord] = {"yes": "yes", "no": "no", "n/a": "n/a"}


__all__ = ["ANSWER_SCHEMA", "MAX_QUOTE_CHARS", "Answer", "checklist_schema", "normalize_answer", "parse_answer",
           "parse_checklist"]


def parse_answer(text: str) -> Answer:
    return _answer(reply_object(text))


def parse_checklist(text: str, ids: list[str]) -> dict[str, Answer]:
    """Answers by check id; every id asked must be answered exactly once and nothing else."""
    obj = reply_object(text)
    if set(obj) != {"answers"} or not isinstance(obj["answers"], list):
        raise MalformedReply("expected an object with one key 'answers' holding a list")
    answers: dict[str, Answer] = {}
    for entry in obj["answers"]:
        answer = _answer(entry, frozenset({"id"}))
        check_id = entry["id"]
        if check_id not in ids or check_id in answers:
            raise MalformedReply(f"unknown or repeated check id {check_id!r}")
        answers[check_id] = answer
    if len(answers) != len(ids):
        raise MalformedReply(f"missing answers for {sorted(set(ids) - set(answers))}")
    return answers
