"""Benchmark: `rubric-gate check` at scale against a bare parse of the same verdict store.

Builds a synthetic repo (a rubric of N checks, M labeled items, a verdict store holding every
pair of base and head, a PR of C changes: rewordings and removals), then runs side by side,
each in its own process:
- the floors: plain scripts that stream-parse the JSONL with `json`, with orjson (the strongest
  line-by-line parse in pure Python) and, when installed, with pyarrow's JSON reader, and fill
  the boolean (item x check) matrix;
- `rubric-gate check` end to end (cold: parses the JSONL and writes its index);
- `rubric-gate check` again on the unchanged store (reads the index);
- optionally an older build (`--before PATH/TO/rubric-gate`) for before/after numbers.
Prints CPU seconds (user + sys of the whole process) beside wall time and peak RSS, and the
targets: `check` <= 0.9x the orjson floor's CPU, the rerun <= 0.08x the json
floor's CPU, and peak RSS within 1.5x the json floor + 150 MiB for imports + 32 bytes per
verdict line (the columns every line keeps: ids of check text, item, hash and judge, the answer
code, the sample and the line's offset). CPU is steadier than wall on a shared machine; each
ratio is of one run of each, side by side.

    python benchmarks/scale.py                 # 10k x 128 and 10k x 256, 10 changes
    python benchmarks/scale.py --large         # also 100k x 64 with 20 changes
    python benchmarks/scale.py --only 10000x64 --before /work/main/.venv/bin/rubric-gate
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
from pathlib import Path

COLD_TARGET = 0.9  # check, parsing the store and writing its index, against the orjson floor
RERUN_TARGET = 0.08  # check on the unchanged store (its index), against the json floor
FIXED_IMPORTS_MIB = 150
BYTES_PER_LINE = 32  # the columns: 4 ids (int32), answer (int8), sample (int32), offset (int64)
MEASURE = """
import resource, subprocess, sys, time
started = time.perf_counter()
proc = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
wall = time.perf_counter() - started
usage = resource.getrusage(resource.RUSAGE_CHILDREN)
print(wall, usage.ru_maxrss, proc.returncode, usage.ru_utime + usage.ru_stime)
sys.stderr.write(proc.stderr.decode()[-2000:])
"""

FLOOR = r"""
import json, sys
import numpy as np
items = {}
with open(sys.argv[2], encoding="utf-8") as f:
    for line in f:
        if line.strip():
            items.setdefault(json.loads(line)["id"], len(items))
texts = {}
rows, cols, fails = [], [], []
matrix = None
with open(sys.argv[1], encoding="utf-8") as f:
    for line in f:
        if not line.strip():
            continue
        v = json.loads(line)
        col = texts.setdefault(" ".join(v["check_text"].split()), len(texts))
        if matrix is None or col >= matrix.shape[1]:
            grown = np.zeros((len(items), max(16, 2 * (col + 1))), dtype=bool)
            if matrix is not None:
                grown[:, : matrix.shape[1]] = matrix
            matrix = grown
        matrix[items[v["item"]], col] = v["answer"] == "no"
print(matrix.shape, int(matrix.sum()))
"""


ORJSON_FLOOR = FLOOR.replace("import json, sys", "import orjson, sys").replace(
    'open(sys.argv[2], encoding="utf-8")', 'open(sys.argv[2], "rb")').replace(
    'open(sys.argv[1], encoding="utf-8")', 'open(sys.argv[1], "rb")').replace("json.loads", "orjson.loads")

PYARROW_FLOOR = r"""
import sys
import numpy as np
import pyarrow.compute as pc
import pyarrow.json as pj
items = pj.read_json(sys.argv[2]).column("id").combine_chunks()
table = pj.read_json(sys.argv[1])
normal = pc.replace_substring_regex(pc.utf8_trim_whitespace(table.column("check_text")), r"\s+", " ")
texts = pc.dictionary_encode(normal.combine_chunks())
rows = pc.index_in(table.column("item"), value_set=items).to_numpy()
matrix = np.zeros((len(items), len(texts.dictionary)), dtype=bool)
matrix[rows, texts.indices.to_numpy()] = pc.equal(table.column("answer"), "no").to_numpy()
print(matrix.shape, int(matrix.sum()))
"""


def check_text(j: int, variant: int = 0) -> str:
    lead = "The report clearly" if variant else "The report"
    return f"{lead} covers topic {j}: it names the affected resource and the setting that makes it insecure."


def build(root: Path, n_items: int, n_checks: int, changes: int) -> dict[str, Path]:
    """Base rubric, head rubric (changes: half rewordings, half removals), items, verdicts."""
    rng = random.Random(0)
    root.mkdir(parents=True, exist_ok=True)
    reworded = set(range(0, changes, 2))
    removed = {n_checks - 1 - k for k in range(changes - len(reworded))}

    def rubric(head: bool) -> str:
        lines = ["id: scale", f"version: {2 if head else 1}", "task: Review the environment.",
                 "calibration: items.jsonl", "verdicts: verdicts.jsonl", "aggregation: all-pass", "checks:"]
        for j in range(n_checks):
            if head and j in removed:
                continue
            text = check_text(j, 1 if head and j in reworded else 0)
            lines += [f"  - id: c{j}", f"    text: {json.dumps(text)}", "    origin: hand"]
        return "\n".join(lines) + "\n"

    paths = {"base": root / "base.yaml", "head": root / "head.yaml", "items": root / "items.jsonl",
             "verdicts": root / "verdicts.jsonl"}
    paths["base"].write_text(rubric(False))
    paths["head"].write_text(rubric(True))
    flawed = [rng.random() < 0.4 for _ in range(n_items)]
    with paths["items"].open("w") as f:
        for i in range(n_items):
            f.write(json.dumps({"id": f"item-{i:06d}", "input": f"environment {i}", "output": f"report {i}",
                                "label": "fail" if flawed[i] else "pass"}) + "\n")
    texts = [(j, check_text(j)) for j in range(n_checks)] + [(j, check_text(j, 1)) for j in sorted(reworded)]
    with paths["verdicts"].open("w") as f:
        for i in range(n_items):
            for j, text in texts:
                # flawed items fail some checks; a reworded check fails the same items (sound edit)
                fails = flawed[i] and (i * 7 + j * 13) % 11 < 3
                f.write(json.dumps({"item": f"item-{i:06d}", "check": f"c{j}", "check_text": text,
                                    "answer": "no" if fails else "yes", "judge": "hand"}) + "\n")
    return paths


def measure(argv: list[str], env: dict[str, str]) -> tuple[float, float, int, float]:
    """(wall s, peak RSS MiB, exit code, CPU s user + sys) of one whole process."""
    out = subprocess.run([sys.executable, "-c", MEASURE, *argv], capture_output=True, text=True, env=env, check=True)
    wall, rss_kib, code, cpu = out.stdout.split()
    if int(code) not in (0, 1):
        sys.stderr.write(out.stderr)
    return float(wall), int(rss_kib) / 1024, int(code), float(cpu)


def compile_package(tool: str) -> None:
    """Write the bytecode of the tool's package, as installing it does: with
    PYTHONDONTWRITEBYTECODE set (as in some CI and dev shells) every run would compile the
    package's source again, 0.15 s of CPU no installed tool spends."""
    with open(tool, "rb") as handle:
        first = handle.readline()
    python = first[2:].decode().strip() if first.startswith(b"#!") else sys.executable
    subprocess.run([python, "-c", "import compileall, os, rubric_gate; "
                    "compileall.compile_dir(os.path.dirname(rubric_gate.__file__), quiet=1)"],
                   check=False, capture_output=True)


def has_pyarrow() -> bool:
    import importlib.util

    return importlib.util.find_spec("pyarrow") is not None


def run_case(n_items: int, n_checks: int, changes: int, before: str | None, tool: str) -> None:
    with tempfile.TemporaryDirectory(prefix="rg-scale-") as tmp:
        paths = build(Path(tmp) / "repo", n_items, n_checks, changes)
        lines = sum(1 for _ in paths["verdicts"].open("rb"))
        size = paths["verdicts"].stat().st_size / 2**20
        env = {**os.environ, "RUBRIC_GATE_INDEX_DIR": str(Path(tmp) / "index")}
        check = ["check", "--base", str(paths["base"]), "--head", str(paths["head"]), "--root",
                 str(paths["base"].parent), "--replay", "--format", "json"]
        print(f"\n== {n_items:,} items x {n_checks} checks, {changes} changes: {lines:,} verdict lines ({size:.0f} MiB)")
        args = [str(paths["verdicts"]), str(paths["items"])]
        floors = {"json": measure([sys.executable, "-c", FLOOR, *args], env),
                  "orjson": measure([sys.executable, "-c", ORJSON_FLOOR, *args], env)}
        if has_pyarrow():
            floors["pyarrow"] = measure([sys.executable, "-c", PYARROW_FLOOR, *args], env)
        for name, (wall, rss, _, cpu) in floors.items():
            print(f"floor ({name} parse + bool matrix){'':{12 - len(name)}} CPU {cpu:7.2f} s  wall {wall:7.2f} s  {rss:7.0f} MiB")
        if not has_pyarrow():
            print("floor (pyarrow): not installed, skipped")
        rows = []
        if before:
            rows.append(("before (--before build)", measure([before, *check], {**env, "RUBRIC_GATE_INDEX": "off"})))
        rows.append(("check, cold (parse + write index)", measure([tool, *check], env)))
        rows.append(("check, rerun (index)", measure([tool, *check], env)))
        json_floor, orjson_floor = floors["json"], floors["orjson"]
        rss_target = 1.5 * json_floor[1] + FIXED_IMPORTS_MIB + BYTES_PER_LINE * lines / 2**20
        for label, (wall, rss, code, cpu) in rows:
            print(f"{label:36s} CPU {cpu:7.2f} s  wall {wall:7.2f} s  {rss:7.0f} MiB  exit {code}  "
                  f"CPU {cpu / orjson_floor[3]:.2f}x orjson, {cpu / json_floor[3]:.2f}x json")
        cold, rerun = rows[-2][1], rows[-1][1]
        ok = {True: "met", False: "NOT met"}
        print(f"target: check CPU <= {COLD_TARGET}x the orjson floor: {cold[3] / orjson_floor[3]:.2f}x "
              f"({cold[3]:.2f} s vs {orjson_floor[3]:.2f} s) {ok[cold[3] <= COLD_TARGET * orjson_floor[3]]}")
        print(f"target: rerun CPU <= {RERUN_TARGET}x the json floor: {rerun[3] / json_floor[3]:.3f}x "
              f"({rerun[3]:.2f} s vs {json_floor[3]:.2f} s) {ok[rerun[3] <= RERUN_TARGET * json_floor[3]]}")
        print(f"target: peak RSS <= 1.5x json floor + {FIXED_IMPORTS_MIB} MiB + {BYTES_PER_LINE} B/line = "
              f"{rss_target:.0f} MiB: check {cold[1]:.0f} MiB {ok[cold[1] <= rss_target]}, "
              f"rerun {rerun[1]:.0f} MiB {ok[rerun[1] <= rss_target]}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--large", action="store_true", help="also run 100,000 x 64 with 20 changes")
    parser.add_argument("--only", help="one case, ITEMSxCHECKS[xCHANGES], e.g. 10000x64")
    parser.add_argument("--before", help="an older rubric-gate executable to compare against")
    parser.add_argument("--tool", default=str(Path(sys.executable).with_name("rubric-gate")))
    args = parser.parse_args()
    if args.only:
        parts = [int(p) for p in args.only.lower().split("x")]
        cases = [(parts[0], parts[1], parts[2] if len(parts) > 2 else 10)]
    else:
        cases = [(10_000, 128, 10), (10_000, 256, 10)] + ([(100_000, 64, 20)] if args.large else [])
    for tool in filter(None, (args.tool, args.before)):
        compile_package(tool)
    for case in cases:
        run_case(*case, before=args.before, tool=args.tool)


if __name__ == "__main__":
    main()
