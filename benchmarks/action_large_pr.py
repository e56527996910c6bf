"""Benchmark: the action's gate and comment for a PR that edits many rubrics.

A real git repository holds N rubrics sharing one calibration set and verdict store; the PR
adds a check to each. The run's own steps (changed files, snapshots, pairing, per-rubric gate,
standard review, comment rendering) are timed side by side, CPU seconds beside wall: first with
every ask read from git and parsed again (no reader cache, no parse memo, no blob cache) and the
report templates compiled per rubric (as before the caches), then as shipped. Prints both and
their ratio; exits 1 below the floor.

    python benchmarks/action_large_pr.py [--rubrics 100] [--floor 2.0]
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from unittest import mock

import yaml

from rubric_gate.action.commits import sources
from rubric_gate.action.commits.changed import changed_via_git, rubric_changes
from rubric_gate.action.commits.snapshot import load_snapshots, memo, model
from rubric_gate.action.gating.gate_file import gate_file
from rubric_gate.action.gating.outcome import GateSettings
from rubric_gate.action.gating.pairing import pair_rewrites
from rubric_gate.action.gating.standard import gate_standard
from rubric_gate.action.render import RunSummary, render_body
from rubric_gate.report import markdown
from rubric_gate.sources import SourceText
from rubric_gate.verdicts import VerdictStore
from rubric_gate.verdicts.blobs import default_cache

TEXTS = {"A": "Does the design encrypt data at rest?", "B": "Are IAM roles scoped to least privilege?",
         "C": "Is public network exposure justified?", "D": "Are audit logs retained for a year?",
         "E": "Does the design mention encryption anywhere?"}
FAILS = {"R1": {"A"}, "R2": {"A", "B"}, "R3": {"B", "C", "D"}, "R4": {"D"}, "R5": set()}
LABELS = {"R1": "fail", "R2": "fail", "R3": "fail", "R4": "pass", "R5": "pass"}
GLOBS = ("rubrics/**/*.y*ml",)


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-c", "user.name=b", "-c", "user.email=b@example.com", *args], cwd=repo,
                          capture_output=True, text=True, check=True).stdout.strip()


def rubric(i: int, checks: str) -> str:
    return yaml.safe_dump({"id": f"r{i}", "version": 1, "task": "Review a cloud security design.",
                           "calibration": "calibration/set.jsonl", "verdicts": "calibration/set.verdicts.jsonl",
                           "checks": [{"id": c, "text": TEXTS[c]} for c in checks]}, sort_keys=False)


def build(repo: Path, n: int) -> tuple[str, str]:
    git(repo, "init", "-q", "-b", "main")
    (repo / "calibration").mkdir()
    (repo / "rubrics").mkdir()
    (repo / "calibration/set.jsonl").write_text("".join(
        json.dumps({"id": i, "input": f"design {i}", "output": f"review {i}", "label": lab}) + "\n"
        for i, lab in LABELS.items()))
    (repo / "calibration/set.verdicts.jsonl").write_text("".join(
        json.dumps({"item": i, "check_text": t, "answer": "no" if c in FAILS[i] else "yes"}) + "\n"
        for c, t in TEXTS.items() for i in LABELS))
    for i in range(n):
        (repo / f"rubrics/r{i:03}.yaml").write_text(rubric(i, "ABCD"))
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "base")
    base = git(repo, "rev-parse", "HEAD")
    for i in range(n):
        (repo / f"rubrics/r{i:03}.yaml").write_text(rubric(i, "ABCDE"))
    git(repo, "commit", "-q", "-am", "add E everywhere")
    return base, git(repo, "rev-parse", "HEAD")


def gate(repo: Path, base: str, head: str) -> tuple[float, float]:
    """(wall s, CPU s of this process and the git processes it ran) of one run's own steps."""
    started, cpu = time.perf_counter(), _cpu()
    reader = sources.GitReader(repo)
    files = changed_via_git(repo, base, head)
    snapshots = load_snapshots(reader, base, base, head, files, memo.ParseMemo())
    changes = pair_rewrites(rubric_changes(files, GLOBS), snapshots, GLOBS)
    settings = GateSettings(snapshots=snapshots, trust_pr_verdicts=True)  # replay
    outcomes = [gate_file(change, settings) for change in changes]
    assert all(o.passed for o in outcomes), [o.error for o in outcomes if o.error]
    standard = gate_standard(snapshots, GLOBS, changes)
    render_body(RunSummary("pass", outcomes, head, base, standard=standard))
    return time.perf_counter() - started, _cpu() - cpu


def _cpu() -> float:
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime


def _parsed_every_time(reader, sha: str, path: str) -> VerdictStore | None:  # type: ignore[no-untyped-def]
    text = reader.read(sha, path)
    return None if text is None else VerdictStore.from_source(SourceText(f"{sha[:7]}:{path}", text, None))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rubrics", type=int, default=100)
    parser.add_argument("--floor", type=float, default=2.0, help="minimum speed-up of the caches")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        repo = Path(tmp)
        base, head = build(repo, args.rubrics)
        # Without the caches: every ask reads git and parses again; every report compiles its templates.
        with (mock.patch.object(sources.GitReader, "read_file", lambda self, sha, path: self._read_file(
                  sha, sources.check_repo_path(sha, path))),
              mock.patch.object(memo._Lru, "get", lambda self, blob_id, display, build: build()),
              mock.patch.object(model, "read_store", _parsed_every_time),
              mock.patch.object(markdown, "_environment", markdown._environment.__wrapped__)):
            uncached, uncached_cpu = gate(repo, base, head)
        markdown._environment.cache_clear()
        default_cache().clear()
        cached, cached_cpu = gate(repo, base, head)
    ratio = uncached_cpu / cached_cpu
    print(f"{args.rubrics} edited rubrics: {uncached_cpu:.2f} s CPU ({uncached:.2f} s wall) re-reading and "
          f"re-parsing, {cached_cpu:.2f} s CPU ({cached:.2f} s wall) with the caches; {ratio:.1f}x CPU "
          f"(floor {args.floor:.1f}x)")
    return 0 if ratio >= args.floor else 1


if __name__ == "__main__":
    sys.exit(main())
