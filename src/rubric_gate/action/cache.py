"""Verdicts the action judged, kept between runs (restored and saved by `actions/cache`).

Only keyed verdicts (judge, prompt version and item content hash all recorded) are read back,
and only from files the checkout does not track: a PR cannot plant a verdict the gate trusts.
"""

from __future__ import annotations

import time
from pathlib import Path

from rubric_gate.errors import InputError
from rubric_gate.verdicts import VerdictStore

CACHE_FILE = "verdicts.jsonl"


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
                self.store = loaded.keyed_only()
                self.loaded = len(self.store)

    def store_for(self, base: VerdictStore) -> VerdictStore:
        """A store holding `base`'s verdicts, then the cache's; what is judged goes to the cache file."""
        return base.merged(self.store, path=self.path, display=str(self.path))

    def keep(self, store: VerdictStore, before: int) -> None:
        """Remember what `store` judged after its first `before` verdicts, for the next rubric."""
        if len(store) > before:
            self.store = self.store.merged(store.since(before))
