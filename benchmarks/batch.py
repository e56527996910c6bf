"""Benchmark: batch judging of 100,000 pairs against the local fake batch server.

The fake (tests/fakes/batches.py) runs in its own process. The tool builds every request,
journals it, uploads the batch files (OpenAI: 50,000 requests per file), polls, streams the
output files back, routes each result by custom_id and appends every verdict. Its own per-pair
cost (CPU time of the tool's process) and peak memory are printed as ratios against reading
the same results files with plain `json`, measured side by side in this run:

- time floor: `for line in file: json.loads(line)` over the output files (CPU time);
- memory floor: `[json.loads(line) for line in file]`, what loading the results costs.

Each phase runs in its own child process so peak RSS (ru_maxrss) belongs to it alone; memory is
the increase over the RSS after the inputs (rubric, calibration set) are built.

    python benchmarks/batch.py [--checks 100] [--items 1000]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
JUDGE = "openai:gpt-4o-mini"


def rss_kb() -> int:
    with open("/proc/self/statm") as handle:
        return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") // 1024


def phase_tool(port: int, workdir: Path, checks: int, items: int) -> dict[str, float]:
    os.environ["OPENAI_BASE_URL"] = f"http://127.0.0.1:{port}/v1"
    os.environ["OPENAI_API_KEY"] = "bench"
    from rubric_gate.batch import judge_in_batches
    from rubric_gate.calibration import CalibrationItem, CalibrationSet
    from rubric_gate.rubric import Check, Rubric
    from rubric_gate.verdicts import VerdictStore

    rubric = Rubric(id="bench", version=1, task="Write a short report.", calibration="-", verdicts="-",
                    checks=[Check(id=f"c{i}", text=f"The report covers topic{i}") for i in range(checks)])
    calibration = CalibrationSet(tuple(
        CalibrationItem(id=f"r{i}", input=f"case {i}", output=" ".join(f"topic{j}" for j in range(0, checks, 7 + i % 5)),
                        label="pass" if i % 2 else "fail")
        for i in range(items)
    ), "bench")
    store = VerdictStore.load(workdir / "verdicts.jsonl", missing_ok=True)
    import anthropic  # noqa: F401  (SDK imports belong to the baseline, not to the run)
    import openai  # noqa: F401

    import rubric_gate.batch.runner as runner

    phases: dict[str, float] = {"submit_cpu": 0.0, "collect_cpu": 0.0}

    def timed(name: str, function):  # type: ignore[no-untyped-def]
        def wrapper(*args, **kwargs):  # type: ignore[no-untyped-def]
            started = time.process_time()
            try:
                return function(*args, **kwargs)
            finally:
                phases[f"{name}_cpu"] += time.process_time() - started
                if name == "submit":  # peak RSS so far: building, journaling and uploading requests
                    phases["submit_peak_kb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - base
        return wrapper

    runner.submit_batches = timed("submit", runner.submit_batches)  # type: ignore[assignment]
    runner.collect_batch = timed("collect", runner.collect_batch)  # type: ignore[assignment]
    base = rss_kb()
    wall, cpu = time.perf_counter(), time.process_time()
    outcome = judge_in_batches([rubric], calibration, store, JUDGE, poll_interval=0.2, progress=False)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    assert outcome.complete and outcome.stats.calls == checks * items, outcome.summary
    return {"wall": wall, "cpu": cpu, "peak_kb": peak - base, "batches": len(outcome.submitted),
            "pairs": outcome.stats.calls, **phases}


def phase_json(files: list[str], keep: bool) -> dict[str, float]:
    base = rss_kb()
    cpu = time.process_time()
    kept = []
    for name in files:
        with open(name, encoding="utf-8") as handle:
            for line in handle:
                value = json.loads(line)
                if keep:
                    kept.append(value)
    cpu = time.process_time() - cpu
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return {"cpu": cpu, "peak_kb": peak - base, "lines": len(kept)}


def child(*args: str) -> dict[str, float]:
    proc = subprocess.run([sys.executable, __file__, *args], cwd=ROOT, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise SystemExit(proc.stderr)
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--checks", type=int, default=100)
    parser.add_argument("--items", type=int, default=1000)
    parser.add_argument("--phase", choices=["tool", "json", "json-keep"])
    parser.add_argument("--port", type=int)
    parser.add_argument("--dir")
    parser.add_argument("files", nargs="*")
    args = parser.parse_args()
    if args.phase == "tool":
        print(json.dumps(phase_tool(args.port, Path(args.dir), args.checks, args.items)))
        return
    if args.phase:
        print(json.dumps(phase_json(args.files, keep=args.phase == "json-keep")))
        return

    fake = subprocess.Popen([sys.executable, "-m", "tests.fakes.batches", "0"], cwd=ROOT,
                            stdout=subprocess.PIPE, text=True)
    try:
        port = int(fake.stdout.readline())  # type: ignore[union-attr]
        with tempfile.TemporaryDirectory() as tmp:
            tool = child("--phase", "tool", "--port", str(port), "--dir", tmp,
                         "--checks", str(args.checks), "--items", str(args.items))
            listing = json.load(urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/batches"))
            files, request_bytes = [], 0
            for batch in listing["data"]:
                path = Path(tmp) / f"{batch['id']}.jsonl"
                path.write_bytes(urllib.request.urlopen(
                    f"http://127.0.0.1:{port}/v1/files/{batch['output_file_id']}/content").read())
                files.append(str(path))
                request_bytes = max(request_bytes, len(urllib.request.urlopen(
                    f"http://127.0.0.1:{port}/v1/files/{batch['input_file_id']}/content").read()))
            stream = child("--phase", "json", *files)
            loaded = child("--phase", "json-keep", *files)
    finally:
        fake.terminate()
        fake.wait()

    pairs = tool["pairs"]
    print(f"batch judging, {int(pairs)} pairs in {int(tool['batches'])} OpenAI batches (fake server in its own process)")
    print(f"  tool:  {tool['cpu']:.1f} s CPU ({tool['cpu'] / pairs * 1e6:.0f} us/pair), {tool['wall']:.1f} s wall, "
          f"peak memory +{tool['peak_kb'] / 1024:.0f} MB")
    print(f"    building, journaling, uploading requests: {tool['submit_cpu']:.1f} s CPU, "
          f"peak memory by then +{tool['submit_peak_kb'] / 1024:.0f} MB")
    print(f"    reading results, routing, appending verdicts: {tool['collect_cpu']:.1f} s CPU "
          "(appended to the store 1,000 verdicts at a time)")
    print(f"  json:  {stream['cpu']:.2f} s CPU ({stream['cpu'] / pairs * 1e6:.1f} us/pair) streaming the results; "
          f"+{loaded['peak_kb'] / 1024:.0f} MB holding them")
    print(f"  largest batch input file: {request_bytes / 2**20:.0f} MB")
    print(f"  ratio time  (tool CPU / json.loads per result line): {tool['cpu'] / stream['cpu']:.1f}x")
    print(f"  ratio memory (tool peak / results held as JSON):     {tool['peak_kb'] / loaded['peak_kb']:.2f}x")
    print(f"  ratio memory (submission peak / one batch input file): "
          f"{tool['submit_peak_kb'] * 1024 / request_bytes:.2f}x  (requests stream: at most one batch file)")


if __name__ == "__main__":
    main()
