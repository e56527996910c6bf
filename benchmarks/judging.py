"""Benchmark: re-judging cost of a one-check edit, and the runner's own cost at scale.

A rubric of 10 checks x 50 items is judged in full, then a PR rewords one check. A fake
in-process backend with a fixed latency per call runs through the real runner (limiter,
retries, parsing, fsynced store appends). Prints calls made vs a full re-judge, and wall
time vs the lower bound ceil(calls / concurrency) x latency. Then, at scale:
- CPU per call at 1,000 and 10,000 pairs (zero latency, concurrency 32): flat in the number
  of pairs queued is the target (10k <= 1.2x 1k);
- calls per second at concurrency 8, 32 and 64 with zero latency;
- wall time vs the floor ceil(calls / 32) x 100 ms at 10,000 calls (target <= 1.15x);
- memory per pending pair (`--memory`): what the runner holds for the pairs still queued when
  the first call goes out, at 10k and 100k pairs, beside the same queue with every prompt
  rendered up front (as the runner once held them) and the pairs alone (the floor: the list
  `missing_pairs` returns). Flat in the number of pairs and near the floor is the target.

    python benchmarks/judging.py [--latency 0.1] [--concurrency 16] [--quick] [--memory]
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
from rubric_gate.judges.pairs import all_pairs, missing_pairs
from rubric_gate.judges.prompt import PROMPT_VERSION
from rubric_gate.judges.runner import build_jobs, run_jobs
from rubric_gate.judges.stats import JudgeRunStats
from rubric_gate.llm.protocols import JudgeRequest, Reply
from rubric_gate.llm.retry import RetryPolicy
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


ROOT = Path(__file__).resolve().parent.parent
SERVER = (
    "import sys, time\n"
    f"sys.path.insert(0, {str(ROOT)!r})\n"
    "from http.server import ThreadingHTTPServer\n"
    "ThreadingHTTPServer.request_queue_size = 512  # the default backlog (5) resets bursts of connections\n"
    "from tests.fakes.llm import FakeLLM\n"
    "server = FakeLLM().start()\n"
    "print(server.port, flush=True)\n"
    "time.sleep(10**6)\n"
)


def scaled(n_items: int, latency: float, concurrency: int) -> tuple[int, float, float]:
    """Judge 10 checks x n_items from scratch in process: (calls, wall s, CPU s of this process)."""
    calibration = items(n_items)
    with tempfile.TemporaryDirectory() as tmp:
        store = VerdictStore.load(Path(tmp) / "verdicts.jsonl", missing_ok=True)
        cpu = time.process_time()
        calls, wall = judge([rubric()], calibration, store, latency, concurrency)
        return calls, wall, time.process_time() - cpu


def through_sdk(n_items: int, concurrency: int) -> tuple[int, float, float]:
    """Judge 10 checks x n_items with the real OpenAI SDK against the fake server (another process)."""
    from rubric_gate.judges import judge_missing

    calibration = items(n_items)
    with tempfile.TemporaryDirectory() as tmp:
        store = VerdictStore.load(Path(tmp) / "verdicts.jsonl", missing_ok=True)
        cpu, started = time.process_time(), time.perf_counter()
        stats = judge_missing([rubric()], calibration, store, "openai:fake", concurrency=concurrency, progress=False)
        return stats.calls, time.perf_counter() - started, time.process_time() - cpu


def sdk_floor(calls: int, concurrency: int) -> float:
    """CPU per call of the bare SDK request (same client settings, no runner): the floor."""
    import openai

    async def run() -> None:
        client = openai.AsyncOpenAI(max_retries=0)
        gate = asyncio.Semaphore(concurrency)
        prompt = "<check>\nThe report covers topic1\n</check>\n<output>\ntopic1\n</output>"

        async def one() -> None:
            async with gate:
                await client.chat.completions.create(model="fake", messages=[{"role": "user", "content": prompt}],
                                                     max_completion_tokens=400)

        await asyncio.gather(*(one() for _ in range(calls)))
        await client.close()

    cpu = time.process_time()
    asyncio.run(run())
    return (time.process_time() - cpu) / calls


def at_scale(quick: bool) -> None:
    import os
    import subprocess
    import sys

    server = subprocess.Popen([sys.executable, "-c", SERVER], stdout=subprocess.PIPE, text=True)
    try:
        port = int(server.stdout.readline())  # type: ignore[union-attr]
        os.environ.update(OPENAI_BASE_URL=f"http://127.0.0.1:{port}/v1", OPENAI_API_KEY="fake",
                          RUBRIC_GATE_RETRY_BASE="0.01")
        print("\n== through the OpenAI SDK against a local fake server (no latency; CPU of the judging process)")
        per_call = {}
        for n_items in (100, 1000):
            calls, wall, cpu = through_sdk(n_items, 32)
            per_call[calls] = cpu / calls
            print(f"{calls:6d} pairs, concurrency 32: {cpu / calls * 1e3:6.2f} ms CPU per call, {calls / wall:6.0f} calls/s")
        print(f"CPU per call at 10k pairs / at 1k pairs: {per_call[10000] / per_call[1000]:.2f} (target <= 1.2)")
        floor = sdk_floor(2000, 32)
        print(f"floor, the bare SDK request: {floor * 1e3:.2f} ms CPU per call; the tool at 10k pairs is "
              f"{per_call[10000] / floor:.2f}x that")
        for concurrency in (8, 32, 64):
            calls, wall, _ = through_sdk(200, concurrency)
            print(f"concurrency {concurrency:2d}: {calls / wall:6.0f} calls/s ({calls} calls)")
    finally:
        server.kill()
        server.wait()
    print("\n== in-process fake backend (the runner alone)")
    for n_items in (100, 1000):
        calls, wall, cpu = scaled(n_items, 0.0, 32)
        print(f"{calls:6d} pairs, latency 0, concurrency 32: {cpu / calls * 1e3:6.3f} ms CPU per call, "
              f"{calls / wall:6.0f} calls/s")
    if quick:
        return
    calls, wall, _ = scaled(1000, 0.1, 32)
    bound = math.ceil(calls / 32) * 0.1
    print(f"{calls} calls at 100 ms latency, concurrency 32: wall {wall:.1f} s vs floor {bound:.1f} s "
          f"= {wall / bound:.2f}x (target <= 1.15x)")


class FirstCallProbe:
    """Answers at once; records traced memory when the first call arrives (every job queued)."""

    def __init__(self) -> None:
        self.at_first_call: int | None = None

    async def complete(self, request: JudgeRequest) -> Reply:
        import tracemalloc

        if self.at_first_call is None:
            self.at_first_call = tracemalloc.get_traced_memory()[0]
        return Reply('{"answer": "yes", "quote": ""}', 300, 12)

    async def aclose(self) -> None:
        pass


def pending_memory(n_items: int, eager: bool) -> tuple[int, float, float]:
    """(pairs, bytes per pending pair held by the runner, bytes per pair of the pairs alone).

    With `eager`, every prompt is rendered before the run and kept until it ends, as the runner
    did before prompts were rendered when a worker takes them."""
    import gc
    import tracemalloc

    calibration = items(n_items)
    with tempfile.TemporaryDirectory() as tmp:
        store = VerdictStore.load(Path(tmp) / "verdicts.jsonl", missing_ok=True)
        gc.collect()
        tracemalloc.start()
        empty = tracemalloc.get_traced_memory()[0]
        pairs = missing_pairs([rubric()], calibration, store, JUDGE)
        with_pairs = tracemalloc.get_traced_memory()[0]
        jobs = build_jobs(pairs, "per-check")
        rendered = [job.request for job in jobs] if eager else []
        probe = FirstCallProbe()
        asyncio.run(run_jobs(jobs, probe, store, JUDGE, PROMPT_VERSION, JudgeRunStats(JUDGE),
                             concurrency=32, policy=RetryPolicy(), progress=False))
        tracemalloc.stop()
        assert probe.at_first_call is not None and len(rendered) in (0, len(pairs))
        return len(pairs), (probe.at_first_call - with_pairs) / len(pairs), (with_pairs - empty) / len(pairs)


def memory_section() -> None:
    print("\n== live runner: memory per pending pair (tracemalloc, when the first call goes out)")
    for n_items in (1_000, 10_000):
        n, lazy, floor = pending_memory(n_items, eager=False)
        _, eager, _ = pending_memory(n_items, eager=True)
        print(f"{n:7d} pairs: runner {lazy:6.0f} B/pair (prompts rendered as workers take them), "
              f"{eager:6.0f} B/pair with every prompt rendered up front = {eager / lazy:.1f}x; "
              f"the pairs alone (floor) {floor:6.0f} B/pair")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency", type=float, default=0.1, help="seconds per simulated call")
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--quick", action="store_true", help="skip the 10,000-call latency run (about 35 s)")
    parser.add_argument("--memory", action="store_true", help="only the memory per pending pair (minutes: tracemalloc over 110,000 pairs)")
    args = parser.parse_args()
    if args.memory:
        memory_section()
        return
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
    at_scale(args.quick)


if __name__ == "__main__":
    main()
