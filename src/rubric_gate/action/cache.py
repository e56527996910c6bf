"""Verdicts the action judged, kept between runs (restored and saved by `actions/cache`).

Only keyed verdicts (judge, prompt version and item content hash all recorded) are read back,
and only from files the checkout does not track: a PR cannot plant a verdict the gate trusts.
"""

from __future__ import annotations

import time
from pathlib import Path

from rubric_gate.errors import InputError
from rubric_gate.verdicts import Verdict, VerdictStore

CACHE_FILE = "verdicts.jsonl"


def _keyed(verdict: Verdict) -> bool:
    return bool(verdict.judge and verdict.prompt and verdict.item_hash)


class VerdictCache:
    """One verdict file shared by every rubric of a run, so a pair is judged once."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.path = directory / CACHE_FILE
        self.warnings: list[str] = []
        self.store = VerdictStore(path=None, display=str(self.path))
        self.loaded = 0
        if self.path.is_file():
            try:
                loaded = VerdictStore.load(self.path)
            except InputError as exc:
                # Our own file, damaged (e.g. a cache saved mid-write): keep it aside, start afresh.
                aside = self.path.with_name(f"{CACHE_FILE}.damaged-{int(time.time())}")
                self.path.rename(aside)
                self.warnings.append(f"the verdict cache did not load ({exc.message}); moved it to {aside.name} "
                                     "and started a new one")
            else:
                kept = [v for v in loaded if _keyed(v)]
                self.store = VerdictStore(kept, path=None, display=str(self.path))
                self.loaded = len(kept)

    def store_for(self, base: VerdictStore) -> VerdictStore:
        """A store holding `base`'s verdicts, then the cache's; what is judged goes to the cache file."""
        return VerdictStore([*base, *self.store], path=self.path, display=str(self.path))

    def keep(self, store: VerdictStore, before: int) -> None:
        """Remember what `store` judged after its first `before` verdicts, for the next rubric."""
        new = list(store)[before:]
        if new:
            self.store = self.store.merged(VerdictStore(new))
