"""The keys of journaled pairs: what an open batch holds per pair (an 8-byte digest of its store
key), and the digest a request's custom_id ends with (which pairs it answers)."""

from __future__ import annotations

import hashlib
import json
from array import array
from collections.abc import Iterable

import numpy as np

from rubric_gate.rubric import normalize_text

# One (check, item) pair as journaled: enough to write its verdict without the rubric.
# (item id, item hash, check id, check text, task hash); journals written before the task hash
# have four fields, and their verdicts carry no task hash (so no keyed lookup reuses them).
PairRecord = tuple[str, ...]


def record_task_hash(record: PairRecord) -> str | None:
    return record[4] if len(record) > 4 else None


def pair_key(record: PairRecord) -> tuple[str, str, str]:
    """The store key of a journaled pair, as `Pair.key`: (normalised check text, item hash, task hash)."""
    return normalize_text(record[3]), record[1], record_task_hash(record) or ""


PairKey = tuple[str, str, str]


def key_digest(key: PairKey) -> int:
    """A pair's store key as 8 bytes (blake2b): what an open batch holds per pair. Two keys
    sharing a digest (odds ~1e-8 at a million pairs) only delay one of them to a later round."""
    joined = "\0".join(key).encode("utf-8", "surrogatepass")
    return int.from_bytes(hashlib.blake2b(joined, digest_size=8).digest(), "little")


class PairKeys:
    """The keys of the pairs in a batch, 8 bytes each: count and membership, not the strings.

    Held once: the sorted distinct digests, and the digests added since they were sorted (not
    both copies of every digest: an open batch's keys are held through its collection)."""

    __slots__ = ("_added", "_unique")

    def __init__(self, keys: Iterable[PairKey] = ()) -> None:
        self._added = array("Q")
        self._unique = np.empty(0, dtype=np.uint64)
        self.update(keys)

    def add(self, key: PairKey) -> None:
        self._added.append(key_digest(key))

    def update(self, keys: Iterable[PairKey]) -> None:
        for key in keys:
            self.add(key)

    def digests(self) -> np.ndarray:
        """The distinct digests, sorted."""
        if self._added:
            added = np.frombuffer(self._added, dtype=np.uint64)
            self._unique = np.unique(np.concatenate([self._unique, added]) if len(self._unique) else added)
            del added  # the view, so that the array it reads can go
            self._added = array("Q")
        return self._unique

    def __len__(self) -> int:
        return len(self.digests())

    def __contains__(self, key: object) -> bool:
        return isinstance(key, tuple) and contains(self.digests(), key_digest(key))


def contains(digests: np.ndarray, digest: int) -> bool:
    """Whether sorted `digests` holds `digest`."""
    at = int(np.searchsorted(digests, np.uint64(digest)))
    return at < len(digests) and int(digests[at]) == digest


def union(batches: Iterable[PairKeys]) -> np.ndarray:
    """The sorted distinct digests of all the pairs in `batches`."""
    parts = [keys.digests() for keys in batches]
    return np.unique(np.concatenate(parts)) if parts else np.empty(0, dtype=np.uint64)


def request_digest(judge: str, prompt: str, records: list[PairRecord]) -> str:
    """What a request's custom_id ends with: a digest of the judge, prompt version and pairs it
    answers. The provider echoes the custom_id it was sent, so a journal edited since (one a PR's
    cache scope restored, say) cannot route a result to pairs other than those it was asked for."""
    blob = json.dumps([judge, prompt, [list(r) for r in records]], ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(blob.encode("utf-8", "surrogatepass")).hexdigest()[:DIGEST_CHARS]


def binds(custom_id: str, judge: str, prompt: str, records: list[PairRecord]) -> bool:
    """Whether `custom_id` was made for exactly these pairs under this judge and prompt."""
    return custom_id.rpartition("-")[2] == request_digest(judge, prompt, records)


DIGEST_CHARS = 24  # "rg" + 12 hex, "-n", "-" + 24 hex: within the providers' 64 characters
