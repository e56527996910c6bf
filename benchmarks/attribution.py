"""Time `attribute` against a plain numpy pass, a float matrix product (BLAS), a plain per-item
Python loop and coalition enumeration.

Run: python benchmarks/attribution.py [--items N] [--checks M]
Prints CPU seconds (all threads) beside wall time, measured side by side in one run, and their
ratios; machines are noisy, so read the ratios, not the seconds. The floor is one numpy pass
over the table (column sums of the failed matrix): attribute() cannot read the table less.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from rubric_gate.attribution import attribute, shapley_by_enumeration


def per_item_loop(failed: np.ndarray, flawed: np.ndarray) -> tuple[list[float], list[float], list[int]]:
    """The straightforward implementation: walk items, split each outcome among its failers."""
    n_checks = failed.shape[1]
    credit, blame, unique = [0.0] * n_checks, [0.0] * n_checks, [0] * n_checks
    for row, is_flawed in zip(failed.tolist(), flawed.tolist(), strict=True):
        failers = [j for j, f in enumerate(row) if f]
        if not failers:
            continue
        share = 1.0 / len(failers)
        target = credit if is_flawed else blame
        for j in failers:
            target[j] += share
        if is_flawed and len(failers) == 1:
            unique[failers[0]] += 1
    return credit, blame, unique


def numpy_pass(failed: np.ndarray, flawed: np.ndarray) -> np.ndarray:
    """The floor: one pass over the table (per-check failure counts), nothing weighted."""
    return np.add.reduce(failed.view(np.uint8), axis=0, dtype=np.int64)


def float_product(failed: np.ndarray, flawed: np.ndarray) -> np.ndarray:
    """The former implementation: a 3-row float weight matrix times the table (a BLAS product,
    threaded by OpenBLAS; under CPU contention the threads cost far more CPU than they save)."""
    counts = failed.view(np.uint8).sum(axis=1, dtype=np.int64)
    rows = np.flatnonzero(counts > 0)
    share = 1.0 / counts[rows]
    sub_flawed = flawed[rows]
    weights = np.stack([share * sub_flawed, share * ~sub_flawed, sub_flawed & (counts[rows] == 1)])
    return weights @ failed[rows].view(np.uint8)


def best_of(repeats: int, fn, *args) -> tuple[float, object]:
    best, result = float("inf"), None
    for _ in range(repeats):
        start = time.perf_counter()
        result = fn(*args)
        best = min(best, time.perf_counter() - start)
    return best, result


def cpu_of(repeats: int, fn, *args) -> tuple[float, float]:
    """(CPU seconds of this process, all threads; wall seconds) per call, over `repeats` calls."""
    cpu, wall = time.process_time(), time.perf_counter()
    for _ in range(repeats):
        fn(*args)
    return (time.process_time() - cpu) / repeats, (time.perf_counter() - wall) / repeats


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--items", type=int, default=200_000)
    parser.add_argument("--checks", type=int, default=64)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    # Realistic sparsity: each check fails ~3% of items, flawed items fail more often.
    flawed = rng.random(args.items) < 0.5
    fail_p = np.where(flawed[:, None], 0.06, 0.01)
    failed = rng.random((args.items, args.checks)) < fail_p

    t_vec, fast = best_of(5, attribute, failed, flawed)
    t_loop, slow = best_of(1, per_item_loop, failed, flawed)
    np.testing.assert_allclose(fast.credit, slow[0])
    np.testing.assert_allclose(fast.blame, slow[1])
    assert fast.unique_catches.tolist() == slow[2]
    product = float_product(failed, flawed)
    np.testing.assert_allclose(product[0], fast.credit)
    np.testing.assert_allclose(product[1], fast.blame)
    print(f"on {args.items:,} items x {args.checks} checks, per call (CPU of all threads, wall):")
    runs = [("numpy pass (floor)", numpy_pass), ("attribute()", attribute), ("float product (BLAS)", float_product)]
    measured = {label: cpu_of(10, fn, failed, flawed) for label, fn in runs}
    floor_cpu = measured["numpy pass (floor)"][0]
    for label, (cpu, wall) in measured.items():
        print(f"  {label:22s} CPU {cpu * 1e3:8.1f} ms  wall {wall * 1e3:8.1f} ms  CPU {cpu / floor_cpu:5.2f}x the floor")
    print(f"attribute() CPU / float product CPU = {measured['attribute()'][0] / measured['float product (BLAS)'][0]:.2f}x")
    print(f"attribute() on {args.items:,} x {args.checks}: {t_vec * 1e3:8.1f} ms (best wall)")
    print(f"per-item Python loop, same table:    {t_loop * 1e3:8.1f} ms  (loop / attribute = {t_loop / t_vec:,.0f}x)")
    print()
    print("exact enumeration over every coalition (200 items):")
    print(f"{'checks':>6} {'attribute ms':>13} {'enumeration ms':>15} {'ratio':>10}")
    for n_checks in (4, 6, 8, 10):
        small_flawed = rng.random(200) < 0.5
        small = rng.random((200, n_checks)) < 0.15
        t_small, res = best_of(5, attribute, small, small_flawed)
        t_enum, (credit, blame) = best_of(1, shapley_by_enumeration, small, small_flawed)
        np.testing.assert_allclose(res.credit, credit, atol=1e-9)
        np.testing.assert_allclose(res.blame, blame, atol=1e-9)
        print(f"{n_checks:>6} {t_small * 1e3:>13.3f} {t_enum * 1e3:>15.1f} {t_enum / t_small:>9,.0f}x")


if __name__ == "__main__":
    main()
