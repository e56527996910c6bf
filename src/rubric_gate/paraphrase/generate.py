"""Ask a model for the paraphrases the store lacks, through the shared call layer (its retry
loop honours 429/529 back pressure and retry-after like every other model call)."""

from __future__ import annotations

from collections.abc import Sequence

from rubric_gate.llm.asks import Ask, CallStats, raise_failures, run_asks
from rubric_gate.llm.protocols import JudgeRequest
from rubric_gate.paraphrase.prompt import SCHEMA, parse, render
from rubric_gate.paraphrase.store import Paraphrase, ParaphraseStore

MAX_TOKENS = 300
CONCURRENCY = 4


def _ask(text: str, index: int, count: int, model: str, store: ParaphraseStore) -> Ask:
    def done(paraphrase: str, _tin: int, _tout: int) -> None:
        store.append([Paraphrase(text, model, index, paraphrase)])

    # Sampled like extra `--samples` answers, so rewordings differ from one another.
    request = JudgeRequest(render(text, index, count), SCHEMA, "paraphrase", MAX_TOKENS, sampled=True)
    return Ask(f"paraphrase {index + 1} of {text[:60]!r}", request, parse, done)


def ensure_paraphrases(check_texts: Sequence[str], model: str, count: int, store: ParaphraseStore) -> tuple[dict[str, list[str]], int]:
    """`count` paraphrases of each text by `model`, asking only for those the store lacks.
    Returns (check text -> paraphrases in index order, number of paraphrases asked for)."""
    texts = list(dict.fromkeys(check_texts))
    missing = [(text, i) for text in texts for i in range(count) if store.get(text, model, i) is None]
    stats = CallStats(model, "paraphrase", reused=len(texts) * count - len(missing))
    run_asks([_ask(text, i, count, model, store) for text, i in missing], model, stats, concurrency=CONCURRENCY)
    raise_failures([stats])
    result = {}
    for text in texts:
        found = [store.get(text, model, i) for i in range(count)]
        result[text] = [p.text for p in found if p is not None]
    return result, len(missing)
