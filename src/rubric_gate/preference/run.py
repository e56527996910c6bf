"""`audit --preference-fit`: how well a rubric explains a set of preference pairs (PReMISE §3.2).

Calls, each stored and reused: the pairwise judge with and without the rubric (one each per
pair), applicability (one per pair listing every check), and the judge's own per-check verdicts
on both responses (the verdict store, shared with `discover`). The figures are pure functions
in `preference.fit`.
"""

from __future__ import annotations

import hashlib
import sys
from collections.abc import Sequence
from functools import partial
from typing import Any

import numpy as np

from rubric_gate.audit.store import AuditStore, context_hash
from rubric_gate.audit.templates import render, template_version
from rubric_gate.judges.prompt import as_text
from rubric_gate.llm.asks import Ask, CallStats, merged_stats, raise_failures, run_asks
from rubric_gate.llm.cache import CallKey, stored_ask
from rubric_gate.llm.protocols import JudgeRequest, shared_until
from rubric_gate.pairs import PairSet, PreferencePair
from rubric_gate.preference.fit import bradley_terry, effective_dimensionality, mean_abs_correlation
from rubric_gate.preference.model import CheckFit, PreferenceFit
from rubric_gate.preference.parse import PREFER_SCHEMA, applies_schema, parse_applies, parse_prefer
from rubric_gate.rubric import Rubric, normalize_text
from rubric_gate.verdicts import VerdictStore

PACKAGE = "rubric_gate.preference"
TEXT_CHARS = 6000
PREFER_MAX_TOKENS = 50
APPLIES_BASE_TOKENS = 100
APPLIES_TOKENS_PER_CHECK = 30


def chosen_shown_first(pair: PreferencePair) -> bool:
    """Which side is A: fixed per pair id, about half each way, so position cannot explain accuracy."""
    return int(hashlib.sha256(pair.id.encode("utf-8")).hexdigest(), 16) % 2 == 0


def _sides(pair: PreferencePair) -> tuple[object, object]:
    return (pair.chosen, pair.rejected) if chosen_shown_first(pair) else (pair.rejected, pair.chosen)


def _prefer_asks(pairs: PairSet, checks: Sequence[str], model: str, store: AuditStore,
                 stats: CallStats) -> tuple[list[Ask], dict[str, str]]:
    version = template_version(PACKAGE, "prefer.j2")
    texts = [normalize_text(t) for t in checks]
    asks, contexts = [], {}
    for pair in pairs.pairs:
        a, b = _sides(pair)
        context = context_hash("prefer", texts, pair.prompt, a, b)
        contexts[pair.id] = context
        if store.find("prefer", model, version, pair.id, context) is not None:
            stats.reused += 1
            continue
        prompt = render(PACKAGE, "prefer.j2", checks=list(checks), prompt=as_text(pair.prompt)[:TEXT_CHARS],
                        a=as_text(a)[:TEXT_CHARS], b=as_text(b)[:TEXT_CHARS])

        label = f"{'rubric' if checks else 'no-rubric'} preference on {pair.id}"
        asks.append(stored_ask(store, CallKey("prefer", model, version, pair.id, context), label,
                               JudgeRequest(prompt, PREFER_SCHEMA, "preference", PREFER_MAX_TOKENS,
                                            shared_prefix=shared_until(prompt, "<prompt>")),  # the rubric's checks
                               parse_prefer,
                               _better_result))
    return asks, contexts


def _better_result(better: str) -> dict[str, Any]:
    return {"better": better}


def _applies_result(ids: Sequence[str], answers: dict[str, bool]) -> dict[str, Any]:
    return {"applies": [answers[i] for i in ids]}


def _applies_asks(pairs: PairSet, checks: Sequence[str], model: str, store: AuditStore,
                  stats: CallStats) -> tuple[list[Ask], dict[str, tuple[str, str]]]:
    version = template_version(PACKAGE, "applies.j2")
    ids = [f"c{i + 1}" for i in range(len(checks))]
    context = context_hash("applies", [normalize_text(t) for t in checks])
    asks, keys, asked = [], {}, set()
    for pair in pairs.pairs:
        key = context_hash("prompt", pair.prompt)
        keys[pair.id] = (key, context)
        if key in asked:
            continue  # two pairs with one prompt: one call
        if store.find("applies", model, version, key, context) is not None:
            stats.reused += 1
            continue
        asked.add(key)
        prompt = render(PACKAGE, "applies.j2", prompt=as_text(pair.prompt)[:TEXT_CHARS],
                        checks=list(zip(ids, checks, strict=True)))

        def parse(text: str) -> dict[str, bool]:
            return parse_applies(text, ids)

        request = JudgeRequest(prompt, applies_schema(ids), "applicability",
                               APPLIES_BASE_TOKENS + APPLIES_TOKENS_PER_CHECK * len(ids))
        asks.append(stored_ask(store, CallKey("applies", model, version, key, context), f"applicability for {pair.id}",
                               request, parse, partial(_applies_result, ids)))
    return asks, keys


def preference_fit(rubric: Rubric, pairs: PairSet, *, judge: str, answers: AuditStore, verdicts: VerdictStore,
                   concurrency: int = 8, max_calls: int | None = None, seed: int = 42) -> PreferenceFit:
    from rubric_gate.judges.api import judge_missing
    from rubric_gate.judges.prompt import PROMPT_VERSION
    from rubric_gate.scoring import VerdictLookup

    checks = [c.text for c in rubric.checks]
    prefer_stats, applies_stats = CallStats(judge, "preference"), CallStats(judge, "applicability")
    with_asks, with_ctx = _prefer_asks(pairs, checks, judge, answers, prefer_stats)
    without_asks, without_ctx = _prefer_asks(pairs, [], judge, answers, prefer_stats)
    applies_asks, applies_keys = _applies_asks(pairs, checks, judge, answers, applies_stats)
    asks = [*with_asks, *without_asks]
    run_asks(asks, judge, prefer_stats, concurrency=concurrency, max_calls=max_calls)
    run_asks(applies_asks, judge, applies_stats, concurrency=concurrency, max_calls=max_calls)
    raise_failures([prefer_stats, applies_stats])

    items = pairs.as_items()
    run = judge_missing([rubric], items, verdicts, judge, concurrency=concurrency, max_calls=max_calls,
                        progress=False)
    print(f"preference-fit verdicts: {run.summary}", file=sys.stderr)
    lookup = VerdictLookup(items, verdicts, rubric, judge=judge, prompt=PROMPT_VERSION)
    yes = np.column_stack([~lookup.failed_column(t) for t in checks]).astype(float)  # responses x checks
    chosen, rejected = yes[0::2], yes[1::2]

    prefer_version = template_version(PACKAGE, "prefer.j2")
    applies_version = template_version(PACKAGE, "applies.j2")
    right_with = right_without = 0
    applies = np.zeros((len(pairs), len(checks)), dtype=bool)
    a_first = np.array([chosen_shown_first(p) for p in pairs.pairs])
    for i, pair in enumerate(pairs.pairs):
        winner = "A" if a_first[i] else "B"
        for context, counter in ((with_ctx[pair.id], "with"), (without_ctx[pair.id], "without")):
            record = answers.find("prefer", judge, prefer_version, pair.id, context)
            assert record is not None
            if record.result["better"] == winner:
                if counter == "with":
                    right_with += 1
                else:
                    right_without += 1
        key, context = applies_keys[pair.id]
        record = answers.find("applies", judge, applies_version, key, context)
        assert record is not None
        applies[i] = record.result["applies"]

    # Bradley-Terry on the shown orientation: x = s(A) - s(B), y = 1 when A is the chosen response.
    diff = np.where(a_first[:, None], chosen - rejected, rejected - chosen)
    bt = bradley_terry(diff, a_first, seed)
    n = len(pairs)
    fits = [CheckFit(rubric.checks[j].id, float(applies[:, j].mean()),
                     float(((chosen[:, j] == 1) & (rejected[:, j] == 0)).sum() / n),
                     float(((chosen[:, j] == 0) & (rejected[:, j] == 1)).sum() / n), bt.weights[j])
            for j in range(len(checks))]
    return PreferenceFit(
        pairs_file=pairs.display, pairs=n, judge=judge, pref_acc=right_with / n, pref_acc_without=right_without / n,
        applicability=float(applies.mean()), effective_dimensionality=effective_dimensionality(yes),
        mean_abs_correlation=mean_abs_correlation(yes), cv_accuracy=bt.cv_accuracy, cv_folds=bt.folds,
        weight_entropy=bt.weight_entropy, regularisation_c=bt.C, checks=fits,
        usage=merged_stats([prefer_stats, applies_stats]), judging=[run.to_dict()])
