"""`discover`: a rubric from preference pairs (PReMISE §3.1, with §3.3's preference-rank selection).

extract (one stored call per pair) -> consolidate (embed, cluster, merge; up to ten levels, to a
target pool) -> keep criteria backed by enough candidates -> MMR -> score chosen and rejected
on each (the judge's own verdicts, stored) -> the top K by the share of pairs chosen wins.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np

from rubric_gate.audit.store import AuditStore, context_hash
from rubric_gate.audit.templates import render, template_source, template_version
from rubric_gate.discover.embed import Embedder
from rubric_gate.discover.model import DiscoveredCheck, DiscoverReport
from rubric_gate.discover.parse import (
    EXTRACT_SCHEMA,
    MAX_CRITERIA,
    MIN_CRITERIA,
    Criterion,
    Merge,
    merge_schema,
    parse_extraction,
    parse_merge,
)
from rubric_gate.discover.select import (
    Candidate,
    cluster_labels,
    clusters,
    mmr_select,
    preference_rank,
    preference_share,
)
from rubric_gate.errors import InputError, JudgeError
from rubric_gate.judges.prompt import as_text
from rubric_gate.llm.accounting import with_earlier
from rubric_gate.llm.asks import (
    Ask,
    CallStats,
    merged_stats,
    planned_cost,
    raise_failures,
    run_asks,
)
from rubric_gate.llm.cache import CallKey, stored_ask
from rubric_gate.llm.protocols import JudgeRequest
from rubric_gate.pairs import PairSet
from rubric_gate.rubric import Check, Rubric, normalize_text
from rubric_gate.rubric.ids import fresh_check_id
from rubric_gate.rubric.model import Origin
from rubric_gate.verdicts import VerdictStore

PACKAGE = "rubric_gate.discover"
MAX_LEVELS = 10
MAX_MERGE = 12  # criteria shown in one merge call
EXTRACT_MAX_TOKENS = 3000
MERGE_MAX_TOKENS = 1500
RESPONSE_CHARS = 6000


@dataclass(frozen=True)
class DiscoverSettings:
    size: int = 10  # K
    pool: int | None = None  # consolidation target (default 2K)
    min_support: int = 2
    diversity: float = 0.3  # MMR weight of redundancy against support
    preference_rank: bool = True
    dry_run: bool = False
    concurrency: int = 8
    max_calls: int | None = None


def _version(name: str) -> str:
    return template_version(PACKAGE, name)


def _dedupe(pool: Sequence[Candidate]) -> list[Candidate]:
    by_text: dict[str, Candidate] = {}
    for c in pool:
        key = normalize_text(c.text).lower()
        if key in by_text:
            kept = by_text[key]
            kept.support += c.support
            kept.pairs |= c.pairs
        else:
            by_text[key] = Candidate(c.name, c.text, c.support, set(c.pairs))
    return list(by_text.values())


def _criteria_result(found: list[Criterion]) -> dict[str, Any]:
    return {"criteria": [c.to_result() for c in found]}


def _groups_result(found: list[Merge]) -> dict[str, Any]:
    return {"groups": [g.to_result() for g in found]}


def _extraction_asks(pairs: PairSet, model: str, store: AuditStore,
                     stats: CallStats) -> tuple[list[Ask], dict[str, str]]:
    version = _version("extract.j2")
    contexts: dict[str, str] = {}
    asks: list[Ask] = []
    for pair in pairs.pairs:
        context = context_hash("extract", pair.prompt, pair.chosen, pair.rejected)
        contexts[pair.id] = context
        if store.find("extract", model, version, pair.id, context) is not None:
            stats.reused += 1
            continue
        prompt = render(PACKAGE, "extract.j2", min_criteria=MIN_CRITERIA, max_criteria=MAX_CRITERIA,
                        prompt=as_text(pair.prompt)[:RESPONSE_CHARS], chosen=as_text(pair.chosen)[:RESPONSE_CHARS],
                        rejected=as_text(pair.rejected)[:RESPONSE_CHARS])

        asks.append(stored_ask(store, CallKey("extract", model, version, pair.id, context), f"criteria of pair {pair.id}",
                               JudgeRequest(prompt, EXTRACT_SCHEMA, "pair_criteria", EXTRACT_MAX_TOKENS),
                               partial(parse_extraction, instructions=template_source(PACKAGE, "extract.j2")),
                               _criteria_result))
    return asks, contexts


def _extract(pairs: PairSet, model: str, store: AuditStore, settings: DiscoverSettings,
             usage: list[CallStats]) -> list[Candidate]:
    version = _version("extract.j2")
    stats = CallStats(model, "extract")
    asks, contexts = _extraction_asks(pairs, model, store, stats)
    run_asks(asks, model, stats, concurrency=settings.concurrency, max_calls=settings.max_calls)
    usage.append(stats)
    raise_failures([stats])
    pool = []
    for pair in pairs.pairs:
        record = store.find("extract", model, version, pair.id, contexts[pair.id])
        assert record is not None
        for criterion in record.result["criteria"]:
            c = Criterion.from_result(criterion)
            pool.append(Candidate(c.name, c.check, 1, {pair.id}))
    return pool


def _merge_level(pool: list[Candidate], groups: list[list[int]], model: str, store: AuditStore,
                 settings: DiscoverSettings, usage: list[CallStats], notes: list[str]) -> tuple[list[Candidate], bool]:
    version = _version("merge.j2")
    stats = CallStats(model, "merge")
    keyed = []
    asks = []
    for members in groups:
        labels = [f"c{i + 1}" for i in range(len(members))]
        texts = [pool[m].text for m in members]
        key = "\n".join(texts)
        context = context_hash("merge", [normalize_text(t) for t in texts])
        keyed.append((members, labels, key, context))
        if store.find("merge", model, version, key, context) is not None:
            stats.reused += 1
            continue
        prompt = render(PACKAGE, "merge.j2", members=list(zip(labels, texts, strict=True)))

        def parse(text: str, ids: tuple[str, ...] = tuple(labels)) -> list[Merge]:
            return parse_merge(text, list(ids), template_source(PACKAGE, "merge.j2"))

        asks.append(stored_ask(store, CallKey("merge", model, version, key, context), f"merge of {len(members)} criteria",
                               JudgeRequest(prompt, merge_schema(labels), "merged_criteria", MERGE_MAX_TOKENS),
                               parse, _groups_result))
    run_asks(asks, model, stats, concurrency=settings.concurrency, max_calls=settings.max_calls)
    usage.append(stats)
    if stats.failures:
        # A merge only shortens the pool: criteria the model could not group validly stay apart
        # (the prompt's own rule when unsure), nothing is guessed, and the report says so.
        notes.append(f"{len(stats.failures)} merge call(s) without a valid answer, their criteria kept apart: "
                     + "; ".join(stats.failures))
    replaced: set[int] = set()
    merged: list[Candidate] = []
    for members, labels, key, context in keyed:
        record = store.find("merge", model, version, key, context)
        if record is None:  # unanswered: kept apart (noted above)
            continue
        index_of = dict(zip(labels, members, strict=True))
        for group in (Merge.from_result(g) for g in record.result["groups"]):
            parts = [pool[index_of[m]] for m in group.members]
            replaced.update(index_of[m] for m in group.members)
            merged.append(Candidate(group.name, group.check, sum(p.support for p in parts),
                                    set().union(*(p.pairs for p in parts))))
    kept = [c for i, c in enumerate(pool) if i not in replaced]
    return _dedupe([*kept, *merged]), bool(replaced)


def plan_discovery(pairs: PairSet, model: str, answers: AuditStore, settings: DiscoverSettings) -> list[str]:
    """A dry run: the extraction calls still needed and their estimated cost; later stages
    depend on what extraction returns, so they are described, not counted."""
    stats = CallStats(model, "extract")
    asks, _ = _extraction_asks(pairs, model, answers, stats)
    cost = planned_cost(asks, model)
    price = "cost unknown (no price for this model)" if cost is None else f"estimated ~${cost:.4f}"
    return [f"extract {model}: would make {len(asks)} calls ({stats.reused} answers reused), {price}",
            f"then merge calls per consolidation level (at most {MAX_LEVELS}), embeddings of the pool, and "
            f"about {2 * settings.size} x {2 * len(pairs)} verdict calls to score the pairs' responses"]


def discover_rubric(
    pairs: PairSet,
    *,
    judge: str,
    name: str,
    task: str,
    calibration: str,
    verdicts_path: str,
    answers: AuditStore,
    verdicts: VerdictStore,
    embedder: Embedder,
    extractor: str | None = None,
    settings: DiscoverSettings = DiscoverSettings(),
) -> tuple[Rubric, DiscoverReport]:
    """The discovered rubric and how it was found. Judge failures raise JudgeError (answers
    saved) carrying the statistics of every stage so far."""
    report = DiscoverReport(len(pairs), embeddings=embedder.describe, min_support=settings.min_support)
    try:
        return _discover(pairs, report, judge=judge, name=name, task=task, calibration=calibration,
                         verdicts_path=verdicts_path, answers=answers, verdicts=verdicts, embedder=embedder,
                         extractor=extractor, settings=settings)
    except JudgeError as exc:
        raise with_earlier(exc, report.usage) from None


def _discover(pairs: PairSet, report: DiscoverReport, *, judge: str, name: str, task: str, calibration: str,
              verdicts_path: str, answers: AuditStore, verdicts: VerdictStore, embedder: Embedder,
              extractor: str | None, settings: DiscoverSettings) -> tuple[Rubric, DiscoverReport]:
    from rubric_gate.judges.api import judge_missing
    from rubric_gate.judges.prompt import PROMPT_VERSION
    from rubric_gate.scoring import VerdictLookup

    model = extractor or judge
    usage = report.usage

    pool = _extract(pairs, model, answers, settings, usage)
    report.candidates = len(pool)
    pool = _dedupe(pool)
    report.pool_sizes.append(len(pool))
    target = settings.pool or 2 * settings.size
    for _level in range(MAX_LEVELS):
        if len(pool) <= target:
            break
        vectors = embedder.vectors([c.text for c in pool], usage)
        labels = cluster_labels(vectors, max(target, math.ceil(len(pool) / 2)))
        groups = [g for g in clusters(labels, MAX_MERGE) if len(g) >= 2]
        pool, changed = _merge_level(pool, groups, model, answers, settings, usage, report.notes)
        report.pool_sizes.append(len(pool))
        if not changed:
            break

    backed = [c for c in pool if c.support >= settings.min_support]
    report.backed = len(backed)
    if not backed:
        most = max((c.support for c in pool), default=0)
        raise InputError(pairs.display, f"no criterion is backed by {settings.min_support} or more candidates "
                                        f"(the most is {most}); lower --min-support or give more pairs")
    vectors = embedder.vectors([c.text for c in backed], usage)
    wanted = min(len(backed), 2 * settings.size if settings.preference_rank else settings.size)
    order = mmr_select(vectors, [c.support for c in backed], wanted, settings.diversity)
    chosen = [backed[i] for i in order]
    report.ranked = len(chosen)
    if len(chosen) < settings.size:
        report.notes.append(f"only {len(chosen)} criteria are backed by {settings.min_support} or more "
                            f"candidates (--size {settings.size})")

    taken: set[str] = set()
    checks = [DiscoveredCheck(fresh_check_id(c.name, taken, fallback="criterion"), c.text, c.support, len(c.pairs)) for c in chosen]
    items = pairs.as_items()
    scoring = Rubric(id=name, version="1", task=task, calibration=calibration, verdicts=verdicts_path,
                     checks=[Check(id=c.id, text=c.text) for c in checks])
    run = judge_missing([scoring], items, verdicts, judge, concurrency=settings.concurrency,
                        max_calls=settings.max_calls, progress=False)
    report.judging.append(run.to_dict())
    print(f"pair scoring: {run.summary}", file=sys.stderr)
    lookup = VerdictLookup(items, verdicts, scoring, judge=judge, prompt=PROMPT_VERSION)
    chosen_rows = np.arange(0, len(items), 2)
    shares = []
    for check in checks:
        yes = ~lookup.failed_column(check.text)
        share = preference_share(yes[chosen_rows], yes[chosen_rows + 1])
        check.wins, check.losses, check.ties = share.wins, share.losses, share.ties
        shares.append(share)
    if settings.preference_rank:
        checks = [checks[i] for i in preference_rank(shares, [c.support for c in checks], settings.size)]
    else:
        checks = checks[: settings.size]
    report.checks = checks
    report.usage[:] = merged_stats(usage)
    rubric = Rubric(id=name, version="1", task=task, calibration=calibration, verdicts=verdicts_path, judge=judge,
                    checks=[Check(id=c.id, text=c.text, origin=Origin.generated, source=_source(c, len(pairs)))
                            for c in checks])
    return rubric, report


def _source(check: DiscoveredCheck, pairs: int) -> str:
    share = check.share or 0.0
    return (f"rubric-gate discover: {check.support} candidates from {check.pairs} of {pairs} pairs; "
            f"chosen wins {check.wins}/{pairs} pairs ({100 * share:.0f}%)")
