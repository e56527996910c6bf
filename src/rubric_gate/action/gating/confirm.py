"""Which changed recorded answers a trusted source confirms: the configured judge, live in this run.

A recorded answer a PR changes (or fills in for a check the base has) stands without the override
only where a trusted source gave that answer at the full key of the line the head reads
(`trust.confirmation_keys`: judge, prompt version, task, check text, item content, sample). The
trusted sources are the base branch's record (a line it has is no change), the cache a push run
on the base branch left as an artifact (`action.cache.provenance`) and the verdicts the configured judge
produces in this run (`VerdictCache.evidence`). The cache `actions/cache` restored is not one: a
PR's runs restore the caches saved under the PR's own scope first, and any workflow running for
the PR can save there (`action.cache.verdict_cache`). So a pair to confirm that no trusted source answered is
judged here, live; the restored cache is never read for it. No usable judge (none configured, or a fork's run without its
secret), a key no configured judge reads, or a judge failure: not confirmed (the override).
"""

from __future__ import annotations

from collections.abc import Mapping

from rubric_gate.action.cache.verdict_cache import VerdictCache
from rubric_gate.action.gating.judging import JudgeBackend, load_backend
from rubric_gate.calibration import CalibrationSet
from rubric_gate.calibration.model import CalibrationItem
from rubric_gate.errors import RubricGateError
from rubric_gate.rubric import Check, Rubric, normalize_text
from rubric_gate.service import CallBudget
from rubric_gate.trust import FullKey, confirmation_keys, confirmed_at
from rubric_gate.trust.answers import ChangedAnswer, ItemRef
from rubric_gate.verdicts import VerdictStore


class LiveConfirmer:
    """`trust.Confirms` with the run's configured judges, judging what it must into `cache.live`."""

    def __init__(self, specs: tuple[str, ...], cache: VerdictCache, budget: CallBudget, *, concurrency: int,
                 notices: list[str]) -> None:
        self.specs = specs
        self.cache = cache
        self.budget = budget
        self.concurrency = concurrency
        self.notices = notices
        self._backends: dict[str, JudgeBackend] | None = None

    def judges(self) -> dict[str, JudgeBackend]:
        if self._backends is None:
            loaded = {spec: load_backend(spec)[0] for spec in self.specs}
            self._backends = {spec: backend for spec, backend in loaded.items() if backend is not None}
        return self._backends

    def __call__(self, answers: list[ChangedAnswer], head: VerdictStore, task_texts: Mapping[str, str],
                 items: Mapping[str, CalibrationItem]) -> set[ChangedAnswer]:
        backends = self.judges()
        if not backends:
            return set()
        versions = {spec: backend.prompt for spec, backend in backends.items()}
        needs = {a: confirmation_keys(a, head, task_texts, versions) for a in answers}
        texts = {normalize_text(a.text): a.text for a in answers}
        wanted = list(dict.fromkeys(key for found in needs.values() if found for key, _ in found))
        held = self.cache.evidence().find_answers([(text, ItemRef("", item_hash), judge, prompt, task, sample)
                                             for judge, prompt, task, text, item_hash, sample in wanted])
        missing = [key for key, got in zip(wanted, held, strict=True) if got is None]
        if missing:
            self._judge(missing, backends, texts, task_texts, items)
        evidence = self.cache.evidence()
        return {a for a, found in needs.items() if found is not None and confirmed_at(found, evidence)}

    def _judge(self, missing: list[FullKey], backends: dict[str, JudgeBackend], texts: Mapping[str, str],
               task_texts: Mapping[str, str], items: Mapping[str, CalibrationItem]) -> None:
        """Judge the missing keys live: one judging per (judge, task, check text), on exactly the
        items asked for it, so the calls are the changed pairs (times the samples up to the one asked)."""
        by_hash = {item.content_hash: item for item in items.values()}
        groups: dict[tuple[str, str, str], tuple[set[str], int]] = {}
        for judge, _, task, text, item_hash, sample in missing:
            if item_hash not in by_hash:
                continue  # an item the file's labels do not hold: nothing to judge it on
            hashes, top = groups.get((judge, task, text), (set(), 0))
            groups[(judge, task, text)] = ({*hashes, item_hash}, max(top, sample))
        for (judge, task, text), (hashes, top) in groups.items():
            rubric = Rubric(id="confirm", version="1", task=task_texts[task], calibration="-", verdicts="-",
                            checks=[Check(id="changed", text=texts.get(text, text))])
            calibration = CalibrationSet([by_hash[h] for h in sorted(hashes)], "the items whose answers changed")
            samples = top + 1 if top % 2 == 0 else top + 2  # odd: the judge's sampling keeps a majority
            store = self.cache.live.merged(VerdictStore())
            before = len(store)
            try:
                stats = backends[judge].module.judge_missing([rubric], calibration, store, judge, samples=samples,
                                                             concurrency=self.concurrency,
                                                             max_calls=self.budget.left(), progress=False)
            except RubricGateError as exc:  # never guessed into a verdict: those pairs stay unconfirmed
                self.notices.append(f"Re-judging changed recorded answers with `{judge}` failed ({exc.message}); "
                                    "those answers need the override.")
                stats = getattr(exc, "stats", None)
            if stats is not None:
                self.budget.spend(stats)
            self.cache.keep(store, before)
