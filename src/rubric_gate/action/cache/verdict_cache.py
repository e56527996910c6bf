"""Verdicts the action judged, kept between runs (restored and saved by `actions/cache`).

Only keyed verdicts (judge, prompt version and item content hash all recorded) are read back,
and only from files the checkout does not track. What is read back is not evidence: GitHub scopes
the caches a pull request's runs save to that PR, and restores them before the base branch's, so
any workflow running for the PR (one the PR adds, or a fork's) can save an entry under the gate's
key prefix that the gate's next run restores. So a PR's run reads none of what was restored
(`distrust_restored`): it reads the cache the base branch vouches for, an artifact of a push run
on the base branch (`action.cache.provenance`), and what the configured judge answers in this run
(`live`); those two are `evidence`, which may confirm a recorded answer (`action.gating.confirm`).
"""


from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from rubric_gate.action.github.outputs import command
from rubric_gate.errors import InputError
from rubric_gate.verdicts import VerdictStore

CACHE_FILE = "verdicts.jsonl"

# (keyed verdicts or None, what was read or why not): the base branch's verified cache.
TrustedLoader = Callable[[], "tuple[VerdictStore | None, str]"]


class VerdictCache:
    """One verdict file shared by every rubric of a run, so a pair is judged once."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.path = directory / CACHE_FILE
        self.warnings: list[str] = []
        self.store = VerdictStore(path=None, display=str(self.path))
        self.loaded = 0
        # What the configured judge answered in this run (never read from the file): the only
        # verdicts of this cache that may confirm a recorded answer.
        self.live = VerdictStore(path=None, display="verdicts judged in this run")
        self.trusted = VerdictStore(path=None, display="the base branch's verified verdict cache")
        self.notes: list[str] = []  # where the trusted verdicts came from, for the log and comment
        self._loader: TrustedLoader | None = None
        self._restored_trusted = True
        self._audits: Any = None
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

    def distrust_restored(self, loader: TrustedLoader) -> None:
        """A pull request's run: what `actions/cache` restored may have been saved by any workflow
        running for the PR, so none of it is read (it stays in the file, which saves under the
        PR's scope only). `loader` gives the cache the base branch vouches for, read on first use."""
        self._restored_trusted = False
        self.store = self.live
        self._loader = loader

    def _load_trusted(self) -> None:
        if self._loader is None:
            return
        loader, self._loader = self._loader, None
        found, note = loader()
        self.notes.append(note)
        command("notice", f"rubric-gate: {note}")
        if found is not None and len(found):
            self.trusted = found
            self.store = found.merged(self.store)

    def evidence(self) -> VerdictStore:
        """The verdicts that may confirm a recorded answer: the base branch's verified cache, then
        this run's judging (the restored cache only where its scope is the base branch's own)."""
        self._load_trusted()
        return self.trusted.merged(self.live)

    def store_for(self, base: VerdictStore) -> VerdictStore:
        """A store holding `base`'s verdicts, then the cache's; what is judged goes to the cache file."""
        self._load_trusted()
        return base.merged(self.store, path=self.path, display=str(self.path))

    def audit_store(self) -> Any:
        """The audits and repair candidates judged by this action, beside its verdicts (loaded once a run)."""
        if self._audits is None:
            from rubric_gate.audit import AuditStore

            if not self._restored_trusted:  # restored with the verdicts, from the same scope: not read
                path = self.directory / "audits.jsonl"
                self._audits = AuditStore(path, str(path))  # (what this run audits is still appended)
                return self._audits

            path = self.directory / "audits.jsonl"
            try:
                self._audits = AuditStore.load(path)
            except InputError as exc:  # our own file, damaged: aside, and a new one
                aside = self._aside(path)
                warning = f"the audit cache did not load ({exc.message}); moved it to {aside.name} and started a new one"
                self.warnings.append(warning)
                command("warning", warning)  # loaded mid-run, after the cache's first warnings were shown
                self._audits = AuditStore.load(path)
        return self._audits

    @staticmethod
    def _aside(path: Path) -> Path:
        aside = path.with_name(f"{path.name}.damaged-{int(time.time())}")
        path.rename(aside)
        return aside

    def keep(self, store: VerdictStore, before: int) -> None:
        """Remember what `store` judged after its first `before` verdicts, for the next rubric."""
        if len(store) > before:
            judged = store.after(before)
            self.store = self.store.merged(judged)
            self.live = self.live.merged(judged)


@contextmanager
def judging_store(cache: VerdictCache | None, base: VerdictStore) -> Iterator[VerdictStore]:
    """`base`'s verdicts plus the cache's, for one rubric's judging; what it judges is kept in
    the cache (also when judging fails part-way) so the next rubric of the run reuses it."""
    store = cache.store_for(base) if cache is not None else base.merged(VerdictStore())
    before = len(store)
    try:
        yield store
    finally:
        if cache is not None:
            cache.keep(store, before)
