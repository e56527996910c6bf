"""Benchmark: `rubric-gate action` at scale, against `rubric-gate check` on the same data.

Builds a real git repository: 12 rubrics of C checks each sharing one calibration set of N
labeled items and one verdict store (every check on every item, and the rewordings the PRs
make). PRs reword checks (sound edits: a reworded check fails the same items). Then, each as
its own process, side by side in one run:
- `rubric-gate check` on a PR's one edited rubric that appends its new wording's verdicts to
  the store (base `main:PATH`, the head's files): the floor;
- `rubric-gate action` on that PR, against the test suite's fake GitHub on 127.0.0.1 serving
  the same repository, with the full checkout as its workspace; then again with its cache
  (and the blob index in it) restored, as `actions/cache` does between runs;
- the action on a PR rewording one check of 1 rubric, and on one rewording a check in each of
  the 12 (the store the same bytes in both).
Prints CPU seconds (user + sys of the whole process) beside wall time and peak RSS, and the
targets: the action's peak RSS <= 1.5x `check`'s + 50 MiB, and the CPU of the
12-rubric PR <= 2x the CPU of the 1-rubric PR (the store is the same bytes). Both sides start
cold (no index); CPU is steadier than wall on a shared machine.

    python benchmarks/action_scale.py                  # 3k x 128 and 10k x 128
    python benchmarks/action_scale.py --only 3000x128
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the test suite's fake GitHub
from tests.fakes.github import FakeGitHub, serve

REPO = "acme/rubrics"
RUBRICS = 12
MEASURE = """
import resource, subprocess, sys, time
started = time.perf_counter()
proc = subprocess.run(sys.argv[2:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=sys.argv[1])
wall = time.perf_counter() - started
usage = resource.getrusage(resource.RUSAGE_CHILDREN)
print(wall, usage.ru_maxrss, proc.returncode, usage.ru_utime + usage.ru_stime)
sys.stderr.write(proc.stderr.decode()[-3000:])
"""


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-c", "user.name=b", "-c", "user.email=b@example.com", *args], cwd=repo,
                          capture_output=True, text=True, check=True).stdout.strip()


def check_text(j: int, variant: int = 0) -> str:
    lead = ("The report", "The report clearly", "The report plainly")[variant]
    return f"{lead} covers topic {j}: it names the affected resource and the setting that makes it insecure."


def rubric_yaml(k: int, n_checks: int, reworded: int | None = None, variant: int = 1) -> str:
    lines = [f"id: scale-{k}", "version: 1", "task: Review the environment.", "calibration: calibration/items.jsonl",
             "verdicts: calibration/verdicts.jsonl", "checks:"]
    for j in range(n_checks):
        lines += [f"  - id: c{j}", f"    text: {json.dumps(check_text(j, variant if j == reworded else 0))}"]
    return "\n".join(lines) + "\n"


def build(repo: Path, n_items: int, n_checks: int) -> dict[str, str]:
    """The repository on `main` and three PR heads:
    - "append": rubric r00 rewords c0 and appends the new wording's verdicts to the shared store;
    - "1" and "12": r00 (and r01..r11) reword c0 (c1..c11) to wordings the store already records,
      so the store is the same bytes in both: only the number of edited rubrics differs."""
    rng = random.Random(0)
    flawed = [rng.random() < 0.4 for _ in range(n_items)]

    def fails(i: int, j: int) -> bool:  # a reworded check fails the same items (a sound edit)
        return flawed[i] and (i * 7 + j * 13) % 11 < 3

    def verdict_lines(texts: list[tuple[int, str]]) -> str:
        return "".join(json.dumps({"item": f"item-{i:06d}", "check": f"c{j}", "check_text": text,
                                   "answer": "no" if fails(i, j) else "yes", "judge": "hand"}) + "\n"
                       for i in range(n_items) for j, text in texts)

    repo.mkdir(parents=True)
    git(repo, "init", "-q", "-b", "main")
    (repo / "calibration").mkdir()
    (repo / "rubrics").mkdir()
    with (repo / "calibration/items.jsonl").open("w") as f:
        for i in range(n_items):
            f.write(json.dumps({"id": f"item-{i:06d}", "input": f"environment {i}", "output": f"report {i}",
                                "label": "fail" if flawed[i] else "pass"}) + "\n")
    store = repo / "calibration/verdicts.jsonl"
    store.write_text(verdict_lines([(j, check_text(j)) for j in range(n_checks)]
                                   + [(k, check_text(k, 1)) for k in range(RUBRICS)]))
    for k in range(RUBRICS):
        (repo / f"rubrics/r{k:02}.yaml").write_text(rubric_yaml(k, n_checks))
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "base")
    heads = {"base": git(repo, "rev-parse", "HEAD")}
    base_store = store.read_bytes()
    for name, edited in (("1", 1), ("12", RUBRICS), ("append", 1)):
        git(repo, "checkout", "-q", "-B", f"pr-{name}", "main")
        variant = 2 if name == "append" else 1
        for k in range(edited):  # rubric k rewords its check c{k}
            (repo / f"rubrics/r{k:02}.yaml").write_text(rubric_yaml(k, n_checks, k, variant))
        if name == "append":
            store.write_bytes(base_store + verdict_lines([(0, check_text(0, 2))]).encode())
        git(repo, "commit", "-q", "-am", f"reword a check in {edited} rubric(s)")
        heads[name] = git(repo, "rev-parse", "HEAD")
    return heads


def measure(argv: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, float, int, float]:
    """(wall s, peak RSS MiB, exit code, CPU s user + sys) of one whole process."""
    out = subprocess.run([sys.executable, "-c", MEASURE, str(cwd), *argv], capture_output=True, text=True, env=env,
                         check=True)
    wall, rss_kib, code, cpu = out.stdout.split()
    if int(code) not in (0, 1):
        sys.exit(f"{' '.join(argv[:2])} exited {code}:\n{out.stderr}")
    return float(wall), int(rss_kib) / 1024, int(code), float(cpu)


def action_env(tmp: Path, fake: FakeGitHub, repo: Path, base: str, head: str, cache: Path) -> dict[str, str]:
    """The environment GitHub gives the action's step (the fake's URL as the API) for a PR run."""
    fake.base_sha, fake.head_sha = base, head
    event = tmp / f"event-{head[:7]}.json"
    event.write_text(json.dumps({
        "action": "synchronize", "number": fake.pr_number,
        "pull_request": {"number": fake.pr_number, "html_url": f"https://github.test/{REPO}/pull/{fake.pr_number}",
                         "base": {"ref": "main", "sha": base, "repo": {"full_name": REPO, "fork": False}},
                         "head": {"ref": "pr", "sha": head, "repo": {"full_name": REPO, "fork": False}},
                         "labels": []},
        "repository": {"full_name": REPO}}))
    for name in ("outputs.txt", "summary.md"):
        (tmp / name).write_text("")
    return {"PATH": os.environ["PATH"], "HOME": str(tmp / "home"), "GITHUB_ACTIONS": "true",
            "GITHUB_EVENT_NAME": "pull_request", "GITHUB_EVENT_PATH": str(event), "GITHUB_REPOSITORY": REPO,
            "GITHUB_API_URL": fake.url, "GITHUB_SERVER_URL": "https://github.test", "GITHUB_RUN_ID": "42",
            "GITHUB_WORKSPACE": str(repo), "GITHUB_OUTPUT": str(tmp / "outputs.txt"),
            "GITHUB_STEP_SUMMARY": str(tmp / "summary.md"), "INPUT_GITHUB_TOKEN": "write-token",
            "INPUT_RUBRICS": "rubrics/*.yaml", "INPUT_VERDICT_CACHE": str(cache),
            "RUBRIC_GATE_SECONDS_BETWEEN_WRITES": "0"}


def run_case(n_items: int, n_checks: int, tool: str) -> dict[str, bool]:
    with tempfile.TemporaryDirectory(prefix="rg-action-scale-") as name:
        tmp = Path(name)
        (tmp / "home").mkdir()
        repo = tmp / "repo"
        heads = build(repo, n_items, n_checks)
        lines = n_items * (n_checks + RUBRICS)
        size = (repo / "calibration/verdicts.jsonl").stat().st_size / 2**20
        print(f"\n== {n_items:,} items x {n_checks} checks, {RUBRICS} rubrics sharing one store of {lines:,} "
              f"verdict lines ({size:.0f} MiB; the appending PR adds {n_items:,})")
        load = os.getloadavg()[0]
        fake = FakeGitHub(REPO, repo, base_sha=heads["base"])
        server = serve(fake)
        rows: dict[str, tuple[float, float, int, float]] = {}
        runs = (("append", "action, 1 rubric, appends verdicts"), ("1", "action, 1-rubric PR"),
                ("12", "action, 12-rubric PR"))
        try:
            git(repo, "checkout", "-q", "pr-append")
            check_env = {**os.environ, "RUBRIC_GATE_INDEX_DIR": str(tmp / "check-index")}
            rows["check, 1 rubric, appends verdicts"] = measure(
                [tool, "check", "--base", "main:rubrics/r00.yaml", "--head", "rubrics/r00.yaml", "--root", str(repo),
                 "--replay", "--format", "json"], repo, check_env)
            for head, label in runs:
                git(repo, "checkout", "-q", f"pr-{head}")
                cache = repo / f".verdict-cache-{head}"  # the workspace's, as actions/cache restores it
                env = action_env(tmp, fake, repo, heads["base"], heads[head], cache)
                rows[label] = measure([tool, "action"], repo, env)
                if head == "append":  # the next run, its cache (and the blob index in it) restored
                    rows[f"{label}, cache restored"] = measure([tool, "action"], repo, env)
                shutil.rmtree(cache, ignore_errors=True)
        finally:
            server.shutdown()
            server.server_close()
        print(f"(machine: {os.cpu_count()} cores, load average {load:.1f} at the start, "
              f"{os.getloadavg()[0]:.1f} at the end: read CPU, not wall, when others run)")
        for label, (wall, rss, code, cpu) in rows.items():
            print(f"{label:50s} CPU {cpu:6.2f} s  wall {wall:6.2f} s  {rss:5.0f} MiB  exit {code}")
        check = rows["check, 1 rubric, appends verdicts"]
        one, twelve = rows["action, 1-rubric PR"], rows["action, 12-rubric PR"]
        peak = max(rss for label, (_, rss, _, _) in rows.items() if label.startswith("action"))
        target = 1.5 * check[1] + 50
        ok = {True: "met", False: "NOT met"}
        results = {"memory": peak <= target, "cpu": twelve[3] <= 2 * one[3]}
        print(f"{n_items // 1000}k x {n_checks}: action peak RSS <= 1.5x check + 50 MiB = {target:.0f} MiB: "
              f"{peak:.0f} MiB ({peak / check[1]:.2f}x check's {check[1]:.0f} MiB) {ok[results['memory']]}")
        print(f"{n_items // 1000}k x {n_checks}: 12-rubric PR CPU <= 2x the 1-rubric PR: {twelve[3] / one[3]:.2f}x "
              f"({twelve[3]:.2f} s vs {one[3]:.2f} s) {ok[results['cpu']]}")
        return results


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", help="one case, ITEMSxCHECKS, e.g. 3000x128")
    parser.add_argument("--tool", default=str(Path(sys.executable).with_name("rubric-gate")))
    args = parser.parse_args()
    cases = [tuple(int(p) for p in args.only.lower().split("x"))] if args.only else [(3_000, 128), (10_000, 128)]
    met = [run_case(n_items, n_checks, args.tool) for n_items, n_checks in cases]
    return 0 if all(all(m.values()) for m in met) else 1


if __name__ == "__main__":
    sys.exit(main())
