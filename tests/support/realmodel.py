"""The real-model run's repository and commands, shared by `benchmarks/realmodel.py` (which runs
them against llama-server and records the replies) and tests/llm/test_recorded_replies.py (which
replays them): the same files, the same commands, in the same order.

The repository (tests/fixtures/realmodel/repo) is small on purpose, as a 135M model on one CPU
thread answers about 30 tokens a second: a 4-check rubric on 6 calibration items (3 correct, 3
flawed, from rubrics/cloud-security-review.yaml), a careless version 2 of it (one check loosened,
one added), and 3 preference pairs. Every command that asks a model runs once, with the CLI's
default settings; each starts from what the ones before it stored, as a user's would (so
`check` judges only the pairs v2 adds, and `preview` only what is still missing).
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1] / "fixtures" / "realmodel" / "repo"
JUDGE = "openai:smollm2"
OTHER_JUDGE = "openai:smollm2-b"  # a panel's second judge: the same server, another model name
RUBRIC = "rubrics/security-mini.yaml"
HEAD = "revisions/security-mini-v2.yaml"
VERDICTS = "calibration/security-mini.verdicts.jsonl"
PAIRS = "pairs/security-pairs.jsonl"
CHECK = ("check", "--base", RUBRIC, "--head", HEAD, "--judge", JUDGE)


def git(root: Path, *args: str) -> str:
    env = {"GIT_AUTHOR_NAME": "realmodel", "GIT_AUTHOR_EMAIL": "realmodel@example.invalid",
           "GIT_COMMITTER_NAME": "realmodel", "GIT_COMMITTER_EMAIL": "realmodel@example.invalid",
           "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1", "PATH": "/usr/bin:/bin"}
    return subprocess.run(["git", *args], cwd=root, env=env, capture_output=True, text=True, check=True).stdout


def make_repository(root: Path) -> Path:
    """A git repository at `root` holding the bundled set, committed on `main`."""
    shutil.copytree(REPO, root)
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "security-mini v1, its calibration set and preference pairs")
    return root


def open_pull_request(root: Path) -> None:
    """Before `preview`: the verdicts judged so far are committed on main (a team's recorded
    verdicts), and branch `edit` proposes version 2, as a PR would."""
    git(root, "add", "-A", "calibration", "rubrics", "pairs")
    git(root, "commit", "-q", "--allow-empty", "-m", "verdicts recorded so far")
    git(root, "checkout", "-q", "-b", "edit")
    (root / RUBRIC).write_text((root / HEAD).read_text(encoding="utf-8"), encoding="utf-8")
    git(root, "commit", "-q", "-am", "security-mini v2")
    git(root, "checkout", "-q", "main")


@dataclass(frozen=True)
class Step:
    name: str
    argv: tuple[str, ...]
    what: str
    before: Callable[[Path], None] | None = None
    json_out: bool = False  # stdout is one JSON object (or list), success or not


STEPS: tuple[Step, ...] = (
    Step("judge", ("judge", "--rubric", RUBRIC, "--verdicts", VERDICTS, "--judge", JUDGE, "--no-progress", "--json"),
         "every (check, item) pair of v1, one call each", json_out=True),
    Step("judge-checklist", ("judge", "--rubric", RUBRIC, "--verdicts", "calibration/checklist.verdicts.jsonl",
                             "--judge", JUDGE, "--mode", "checklist", "--no-progress", "--json"),
         "one call per item for all its checks", json_out=True),
    Step("check", (*CHECK, "--format", "json"), "v1 -> v2: the pairs v2 adds, then the gate", json_out=True),
    Step("check-repairs", (*CHECK, "--suggest-repairs"), "rewrites of the rejected checks, each judged"),
    Step("check-audit", (*CHECK, "--audit", "--format", "json"), "structure and grounding of the changed checks",
         json_out=True),
    Step("check-paraphrases", (*CHECK, "--paraphrases", "2", "--format", "json"),
         "2 rewordings of each changed check, each judged", json_out=True),
    Step("preview", ("preview", "--base", "main", "--head", "edit", "--judge", JUDGE),
         "the action's gate on branch edit, judging what is missing", before=open_pull_request),
    Step("audit", ("audit", "--rubric", RUBRIC, "--judge", JUDGE, "--format", "json"),
         "structure and grounding of every v1 check", json_out=True),
    Step("audit-panel", ("audit", "--rubric", RUBRIC, "--judge", JUDGE, "--judge", OTHER_JUDGE, "--format", "json"),
         "the same audits by a panel of two judges (the first one's are stored)", json_out=True),
    Step("audit-preference-fit", ("audit", "--rubric", RUBRIC, "--check", "names-resource", "--check", "states-setting",
                                  "--judge", JUDGE, "--preference-fit", "--pairs", PAIRS, "--format", "json"),
         "preference accuracy with and without two of the checks", json_out=True),
    Step("audit-adversarial", ("audit", "--rubric", RUBRIC, "--judge", JUDGE, "--check", "names-resource",
                               "--adversarial", "1", "--attacker", JUDGE, "--verifier", JUDGE, "--format", "json"),
         "one attack output per check, judged and verified", json_out=True),
    Step("teach", ("teach", RUBRIC, "--judge", JUDGE, "--format", "json"), "checks for the flawed items v1 misses",
         json_out=True),
    Step("discover", ("discover", "--pairs", PAIRS, "--judge", JUDGE, "--out", "rubrics/discovered.yaml", "--size", "2",
                      "--format", "json"), "a rubric from the preference pairs (default embeddings)", json_out=True),
    Step("discover-tfidf", ("discover", "--pairs", PAIRS, "--judge", JUDGE, "--out", "rubrics/discovered.yaml",
                            "--size", "2", "--embeddings", "tfidf", "--force", "--format", "json"),
         "the same with local TF-IDF embeddings", json_out=True),
)
STEP_NAMES = tuple(step.name for step in STEPS)
