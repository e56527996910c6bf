"""Benchmark: batch judging at 10,000 and 100,000 pairs against the local fake batch server.

The fake (tests/fakes/batches.py) runs in its own process. The tool builds every request,
journals it, uploads the batch files (OpenAI: 50,000 requests per file), polls, streams the
output files back, routes each result by custom_id and appends every verdict. Each size runs
in a child process of its own, so peak RSS (ru_maxrss) belongs to it alone; memory is the
increase over the RSS once the inputs (rubric, calibration set, SDK imports) are loaded.

Printed side by side, CPU seconds beside wall:
- the tool's CPU per pair against the floor of reading the same results files with plain
  `json` (`for line in file: json.loads(line)`);
- its peak memory at both sizes, per pair, and what each pair added from 10k to 100k, beside
  what the verdict store alone takes per verdict (the results file loaded, one keyed lookup
  built: any run that stores and looks up verdicts pays that). Flat: each added pair costs the
  run no more than 64 bytes above the store's own. Before streaming it was ~2.8 KB.

    python benchmarks/batch.py [--checks 100] [--items 100 1000]
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


def phase_store(path: str) -> dict[str, float]:
    """The verdict store's own memory for these verdicts: the file loaded (no index) and one
    keyed lookup built, as the run's last scan for missing pairs builds it."""
    from rubric_gate.judges.prompt import prompt_version
    from rubric_gate.verdicts import VerdictStore

    base = rss_kb()
    store = VerdictStore.load(path, use_index=False)
    store.rows_for_keys("The report covers topic0", ["r0"], ["-"], judge=JUDGE, prompt=prompt_version("per-check"),
                        task="-")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return {"peak_kb": peak - base, "verdicts": len(store)}


def child(*args: str) -> dict[str, float]:
    proc = subprocess.run([sys.executable, __file__, *args], cwd=ROOT, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise SystemExit(proc.stderr)
    return json.loads(proc.stdout.strip().splitlines()[-1])


FLAT_SLACK_BYTES = 64  # per pair, above what the verdict store itself takes per verdict


def run_size(checks: int, items: int) -> dict[str, float]:
    fake = subprocess.Popen([sys.executable, "-m", "tests.fakes.batches", "0"], cwd=ROOT, stdout=subprocess.PIPE, text=True)
    try:
        port = int(fake.stdout.readline())  # type: ignore[union-attr]
        with tempfile.TemporaryDirectory() as tmp:
            tool = child("--phase", "tool", "--port", str(port), "--dir", tmp, "--checks", str(checks),
                         "--items", str(items))
            listing = json.load(urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/batches"))
            files = []
            for batch in listing["data"]:
                path = Path(tmp) / f"{batch['id']}.jsonl"
                path.write_bytes(urllib.request.urlopen(
                    f"http://127.0.0.1:{port}/v1/files/{batch['output_file_id']}/content").read())
                files.append(str(path))
            tool["json_cpu"] = child("--phase", "json", *files)["cpu"]
            tool["store_peak_kb"] = child("--phase", "store", str(Path(tmp) / "verdicts.jsonl"))["peak_kb"]
    finally:
        fake.terminate()
        fake.wait()
    return tool


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--checks", type=int, default=100)
    parser.add_argument("--items", type=int, nargs="+", default=[100, 1000])
    parser.add_argument("--phase", choices=["tool", "json", "store"])
    parser.add_argument("--port", type=int)
    parser.add_argument("--dir")
    parser.add_argument("files", nargs="*")
    args = parser.parse_args()
    if args.phase == "tool":
        print(json.dumps(phase_tool(args.port, Path(args.dir), args.checks, args.items[0])))
        return
    if args.phase == "store":
        print(json.dumps(phase_store(args.files[0])))
        return
    if args.phase:
        print(json.dumps(phase_json(args.files, keep=False)))
        return

    runs = [run_size(args.checks, items) for items in args.items]
    print(f"batch judging, {args.checks} checks, OpenAI batches on the fake server (its own process); "
          "CPU = user + sys of the tool's process")
    print(f"{'pairs':>9} {'batches':>7} {'CPU s':>7} {'wall s':>7} {'us/pair':>8} {'json floor':>10} "
          f"{'ratio':>6} {'peak +MiB':>9} {'B/pair':>7}  submit / collect CPU s")
    for tool in runs:
        pairs = tool["pairs"]
        print(f"{int(pairs):>9,} {int(tool['batches']):>7} {tool['cpu']:>7.2f} {tool['wall']:>7.2f} "
              f"{tool['cpu'] / pairs * 1e6:>8.0f} {tool['json_cpu']:>9.2f}s {tool['cpu'] / tool['json_cpu']:>5.1f}x "
              f"{tool['peak_kb'] / 1024:>9.1f} {tool['peak_kb'] * 1024 / pairs:>7.0f}  "
              f"{tool['submit_cpu']:.2f} / {tool['collect_cpu']:.2f}")
    if len(runs) >= 2:
        small, large = runs[0], runs[-1]
        span = large["pairs"] - small["pairs"]
        added = (large["peak_kb"] - small["peak_kb"]) * 1024 / span
        store = (large["store_peak_kb"] - small["store_peak_kb"]) * 1024 / span
        bound = store + FLAT_SLACK_BYTES
        verdict = "flat" if added <= bound else "NOT flat"
        print(f"verdict store alone (the file loaded, one keyed lookup built): +{small['store_peak_kb'] / 1024:.1f} MiB "
              f"at {int(small['pairs']):,}, +{large['store_peak_kb'] / 1024:.1f} MiB at {int(large['pairs']):,}")
        print(f"target: memory flat in pairs: each pair from {int(small['pairs']):,} to {int(large['pairs']):,} "
              f"added {added:.0f} B to the run (the store alone: {store:.0f} B per verdict; bound "
              f"{store:.0f} + {FLAT_SLACK_BYTES} = {bound:.0f} B) {verdict}")


if __name__ == "__main__":
    main()
