"""The README's "Your first gated edit", run as written in a fresh directory: each command line
of its block in order, with the steps it leaves to the reader (the `#` lines) done by the test."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
CLI = Path(sys.executable).parent / "rubric-gate"


def _block() -> list[str]:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index("## Your first gated edit"):]
    return re.search(r"```sh\n(.*?)```", section, re.S).group(1).splitlines()


def _record_verdicts(repo: Path, fails: dict[str, set[str]]) -> None:
    """The reader's step: one hand-written line per (check, item), in the README's format."""
    rubric = yaml.safe_load((repo / "rubrics/qa.yaml").read_text())
    items = [json.loads(line)["id"] for line in (repo / rubric["calibration"]).read_text().splitlines()]
    (repo / rubric["verdicts"]).write_text("".join(
        json.dumps({"item": i, "check_text": c["text"], "answer": "no" if i in fails.get(c["id"], ()) else "yes"}) + "\n"
        for c in rubric["checks"] for i in items))


def _delete_first_check(repo: Path) -> str:
    path = repo / "rubrics/qa.yaml"
    rubric = yaml.safe_load(path.read_text())
    gone = rubric["checks"].pop(0)["id"]
    path.write_text(yaml.safe_dump(rubric, sort_keys=False))
    return gone


def test_the_first_gated_edit_runs_as_written(tmp_path: Path) -> None:
    env = {**os.environ, "GIT_AUTHOR_NAME": "n", "GIT_AUTHOR_EMAIL": "n@example.com", "GIT_COMMITTER_NAME": "n",
           "GIT_COMMITTER_EMAIL": "n@example.com", "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
    env = {k: v for k, v in env.items() if not k.startswith(("GITHUB_", "INPUT_", "ANTHROPIC_", "OPENAI_"))}
    cwd, repo, results = tmp_path, tmp_path / "my-rubrics", {}
    for line in _block():
        command = line.split("  #")[0].strip()
        if command.startswith("# record a verdict"):
            # ex-2 (flawed) is caught by the first check only: deleting it loses a unique catch.
            first = yaml.safe_load((repo / "rubrics/qa.yaml").read_text())["checks"][0]["id"]
            _record_verdicts(repo, {first: {"ex-2", "ex-3"}})
            continue
        if command.startswith("# edit rubrics/qa.yaml"):
            _delete_first_check(repo)
            continue
        if not command or command.startswith("#"):
            continue
        for part in command.split(" && "):
            args = shlex.split(part)
            if args[0] == "cd":
                cwd = cwd / args[1]
                continue
            if args[0] == "rubric-gate":
                args[0] = str(CLI)
            proc = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, check=False, timeout=120)
            results[part] = proc
            if args[1:2] != ["preview"]:
                assert proc.returncode == 0, (part, proc.stdout, proc.stderr)
    lint = results["rubric-gate lint rubrics/qa.yaml"]
    assert lint.stdout == "" and "clean" in lint.stderr  # every pair recorded by hand
    preview = results["rubric-gate preview --base main"]
    assert preview.returncode == 1, preview.stderr  # the deletion is rejected
    assert preview.stdout.startswith("<!-- rubric-gate -->\n## ❌ rubric-gate: FAIL")
    assert "would lose a unique catch" in preview.stdout and "To merge:" in preview.stdout
    assert (repo / ".rubric-gate/preview/comment.md").read_text() == preview.stdout
