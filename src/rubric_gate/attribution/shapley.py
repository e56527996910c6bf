"""Exact Shapley attribution of pass/fail outcomes to checks.

Under "at most k checks may say no" an item failed by the set F of checks is failed by the
rubric iff |F| > k. That game is symmetric in F and every other check is a null player, so
each check in F gets 1/|F| of the outcome when |F| > k and nothing otherwise. Summed over
flawed items this is a check's catch credit, over correct items its false-fail blame.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

import numpy as np


@dataclass(frozen=True)
class Attribution:
    """Per-check totals, each an array with one entry per check (column)."""

    credit: np.ndarray  # float: catch credit on flawed items
    blame: np.ndarray  # float: false-fail blame on correct items
    unique_catches: np.ndarray  # int: flawed items this check is pivotal for (|F| = k + 1)
    max_failures: int = 0


# Up to this many (flawed, |F|) groups, each group's column sums are taken apart; above it (a
# Python call per group would cost more than the sums) by one `reduceat`.
GROUPS_SUMMED_APART = 64


def _validate(failed: np.ndarray, flawed: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    failed = np.asarray(failed, dtype=bool)
    flawed = np.asarray(flawed, dtype=bool)
    if failed.ndim != 2:
        raise ValueError(f"failed must be a 2-D items x checks array, got shape {failed.shape}")
    if flawed.shape != (failed.shape[0],):
        raise ValueError(f"flawed must have one entry per item ({failed.shape[0]}), got shape {flawed.shape}")
    return failed, flawed


def _exact(bound: int) -> type[np.integer]:
    """The narrowest type a count of at most `bound` cells fits in: summing in it is exact, and
    2-5x faster than widening every cell to int64."""
    return np.uint8 if bound <= 0xFF else np.uint16 if bound <= 0xFFFF else np.uint32 if bound <= 0xFFFFFFFF else np.int64


def failure_counts(failed: np.ndarray) -> np.ndarray:
    """|F| per item: how many checks answered no (int64)."""
    failed = np.asarray(failed, dtype=bool)
    exact = _exact(failed.shape[-1] if failed.ndim else 0)
    return cast(np.ndarray, failed.view(np.uint8).sum(axis=1, dtype=exact).astype(np.int64, copy=False))


def column_counts(failed: np.ndarray) -> np.ndarray:
    """Per check (column): on how many items (rows) it answered no (int64)."""
    failed = np.asarray(failed, dtype=bool)
    exact = _exact(failed.shape[0] if failed.ndim else 0)
    return cast(np.ndarray, failed.view(np.uint8).sum(axis=0, dtype=exact).astype(np.int64, copy=False))


def attribute(failed: np.ndarray, flawed: np.ndarray, max_failures: int = 0, *,
              counts: np.ndarray | None = None) -> Attribution:
    """Shapley credit, blame and unique (pivotal) catches per check, in closed form.

    `failed`: bool items x checks, True where the check answered no.
    `flawed`: bool per item, True where the human label is fail.
    `counts`: `failure_counts(failed)` when the caller has it already.
    """
    if max_failures < 0:
        raise ValueError("max_failures must be >= 0")
    failed, flawed = _validate(failed, flawed)
    counts = failure_counts(failed) if counts is None else counts
    credit, blame, unique = _shares(failed, flawed, counts, max_failures)
    return Attribution(credit=credit, blame=blame, unique_catches=unique, max_failures=max_failures)


def _shares(failed: np.ndarray, flawed: np.ndarray, counts: np.ndarray,
            max_failures: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Credit, blame and unique catches per check from integer column sums.

    Items the rubric fails are grouped by (flawed, |F|); each group's column sums are exact
    integer counts (one `reduceat` pass, no BLAS: a threaded float product of this tiny rank
    cost 3.5x the CPU under contention), and only the few groups are weighted by 1/|F|."""
    n_checks = failed.shape[1]
    rows = np.flatnonzero(counts > max_failures)
    if not len(rows):
        return np.zeros(n_checks), np.zeros(n_checks), np.zeros(n_checks, dtype=np.int64)
    row_counts, row_flawed = counts[rows], flawed[rows]
    order = np.lexsort((row_counts, row_flawed))
    rows, row_counts, row_flawed = rows[order], row_counts[order], row_flawed[order]
    starts = np.flatnonzero(np.r_[True, (row_counts[1:] != row_counts[:-1]) | (row_flawed[1:] != row_flawed[:-1])])
    grouped = failed[rows]
    if len(starts) <= GROUPS_SUMMED_APART:  # a sum down each group's rows: 4x faster than reduceat's
        ends = [*starts[1:].tolist(), len(rows)]
        sums = np.array([column_counts(grouped[start:end]) for start, end in zip(starts.tolist(), ends, strict=True)])
    else:
        sums = np.add.reduceat(grouped.view(np.uint8), starts, axis=0, dtype=np.int64)
    group_counts, group_flawed = row_counts[starts], row_flawed[starts]
    credit = (sums[group_flawed] / group_counts[group_flawed, None]).sum(axis=0)
    blame = (sums[~group_flawed] / group_counts[~group_flawed, None]).sum(axis=0)
    unique = sums[group_flawed & (group_counts == max_failures + 1)].sum(axis=0)
    return credit, blame, unique


def shapley_by_enumeration(failed: np.ndarray, flawed: np.ndarray, max_failures: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Shapley credit and blame by summing marginal contributions over every coalition.

    Exponential in the number of checks: a reference for tests and benchmarks only.
    """
    from itertools import combinations
    from math import factorial

    failed, flawed = _validate(failed, flawed)
    n_items, n_checks = failed.shape
    credit = np.zeros(n_checks)
    blame = np.zeros(n_checks)
    weights = [factorial(s) * factorial(n_checks - s - 1) / factorial(n_checks) for s in range(n_checks)]
    for item in range(n_items):
        row = failed[item]
        for player in range(n_checks):
            others = [c for c in range(n_checks) if c != player]
            value = 0.0
            for size in range(n_checks):
                for coalition in combinations(others, size):
                    fails_without = int(row[list(coalition)].sum()) if coalition else 0
                    fails_with = fails_without + int(row[player])
                    marginal = int(fails_with > max_failures) - int(fails_without > max_failures)
                    value += weights[size] * marginal
            if flawed[item]:
                credit[player] += value
            else:
                blame[player] += value
    return credit, blame
