"""Benchmark: re-judging cost of a one-check edit, and wall time against the concurrency bound.

A rubric of 10 checks x 50 items is judged in full, then a PR rewords one check. A fake
in-process backend with a fixed latency per call runs through the real runner (limiter,
retries, parsing, fsynced store appends). Prints calls made vs a full re-judge, and wall
time vs the lower bound ceil(calls / concurrency) x latency.

    python benchmarks/judging.py [--latency 0.1] [--concurrency 16]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import re
import tempfile
import time
from pathlib import Path

from rubric_gate.calibration import CalibrationItem, CalibrationSet
from rubric_gate.judges.backend import JudgeRequest, Reply
from rubric_gate.judges.limits import RetryPolicy
from rubric_gate.judges.pairs import all_pairs, missing_pairs
from rubric_gate.judges.prompt import PROMPT_VERSION
from rubric_gate.judges.runner import build_jobs, run_jobs
from rubric_gate.judges.stats import JudgeRunStats
from rubric_gate.rubric import Check, Rubric
from rubric_gate.verdicts import VerdictStore

JUDGE = "bench:fake-model"
CHECK = re.compile(r"<check>\n(.*?)\n</check>", re.DOTALL)


class LatencyBackend:
    """Answers after a fixed delay; 'yes' when the check's last word is in the output."""

    def __init__(self, latency: float) -> None:
        self.latency = latency
        self.calls = 0

    async def complete(self, request: JudgeRequest) -> Reply:
        self.calls += 1
        await asyncio.sleep(self.latency)
        word = CHECK.search(request.prompt).group(1).split()[-1]  # type: ignore[union-attr]
        output = request.prompt.split("<output>\n", 1)[1].split("\n</output>", 1)[0]
        return Reply(json.dumps({"answer": "yes" if word in output else "no", "quote": ""}), 300, 12)

    async def aclose(self) -> None:
        pass


def rubric(reworded: bool = False) -> Rubric:
    checks = [Check(id=f"c{i}", text=f"The report covers topic{i}") for i in range(10)]
    if reworded:
        checks[4] = Check(id="c4", text="The report clearly covers topic4")
    return Rubric(id="bench", version=2 if reworded else 1, task="Write a report.", calibration="-",
                  verdicts="-", checks=checks)


def items(n: int = 50) -> CalibrationSet:
    return CalibrationSet(tuple(
        CalibrationItem(id=f"r{i}", input=f"case {i}", output=" ".join(f"topic{j}" for j in range(10) if (i + j) % 3),
                        label="pass" if i % 2 else "fail")
        for i in range(n)
    ), "bench")


def judge(rubrics: list[Rubric], calibration: CalibrationSet, store: VerdictStore,
          latency: float, concurrency: int) -> tuple[int, float]:
    jobs = build_jobs(missing_pairs(rubrics, calibration, store, JUDGE), "per-check")
    backend = LatencyBackend(latency)
    started = time.perf_counter()
    asyncio.run(run_jobs(jobs, backend, store, JUDGE, PROMPT_VERSION, JudgeRunStats(JUDGE),
                         concurrency=concurrency, policy=RetryPolicy(), progress=False))
    return backend.calls, time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency", type=float, default=0.1, help="seconds per simulated call")
    parser.add_argument("--concurrency", type=int, default=16)
    args = parser.parse_args()
    calibration = items()
    base, head = rubric(), rubric(reworded=True)
    with tempfile.TemporaryDirectory() as tmp:
        store = VerdictStore.load(Path(tmp) / "verdicts.jsonl", missing_ok=True)
        full_calls, full_wall = judge([base], calibration, store, args.latency, args.concurrency)
        pr_calls, pr_wall = judge([base, head], calibration, store, args.latency, args.concurrency)
        rerun_calls, _ = judge([base, head], calibration, store, args.latency, args.concurrency)
    full_rejudge = len(all_pairs([head], calibration))
    print(f"rubric: 10 checks x 50 items; latency {args.latency * 1000:.0f} ms/call; concurrency {args.concurrency}")
    for label, calls, wall in (("initial full judge", full_calls, full_wall), ("PR rewording one check", pr_calls, pr_wall)):
        bound = math.ceil(calls / args.concurrency) * args.latency
        print(f"{label}: {calls} calls, wall {wall:.2f} s vs lower bound {bound:.2f} s (ratio {wall / bound:.2f})")
    print(f"PR calls vs full re-judge of the head rubric: {pr_calls} / {full_rejudge} = {pr_calls / full_rejudge:.2f}")
    print(f"second run of the same PR: {rerun_calls} calls")


if __name__ == "__main__":
    main()
