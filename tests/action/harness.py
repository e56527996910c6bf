"""Helpers for the action's end-to-end tests: a real git repository, a fake GitHub, a runner."""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from unittest import mock

import yaml

from tests.fakes.github import FakeGitHub

REPO = "acme/rubrics"
TOKEN = "write-token"
WORKFLOW = ".github/workflows/rubric-gate.yml"
AUTHOR = "author"  # who triggers an event that is not a label's (the harness's default sender)
RUBRIC = "rubrics/demo.yaml"
CALIBRATION = "calibration/demo.jsonl"
VERDICTS = "calibration/demo.verdicts.jsonl"

TEXTS = {
    "A": "Does the design encrypt data at rest?",
    "A2": "Does the design mention encryption anywhere?",
    "B": "Are IAM roles scoped to least privilege?",
    "C": "Is public network exposure justified?",
    "D": "Are audit logs retained for a year?",
    "E": "Does it thank @octocat | and avoid <script>alert(1)</script> in the design?",
}
# The paper's example: which checks answer no on which item (R1-R3 flawed, R4-R5 correct).
FAILS = {"R1": {"A"}, "R2": {"A", "B"}, "R3": {"B", "C", "D"}, "R4": {"D"}, "R5": {"E"}}
LABELS = {"R1": "fail", "R2": "fail", "R3": "fail", "R4": "pass", "R5": "pass"}


def rubric_yaml(checks: list[str], *, judge: str | None = None, extra: dict[str, str] | None = None) -> str:
    texts = {**TEXTS, **(extra or {})}
    data: dict = {"id": "demo", "version": 1, "task": "Review a cloud security design.",
                  "calibration": CALIBRATION, "verdicts": VERDICTS}
    if judge:
        data["judge"] = judge
    # "A=A2" keeps id A with the text of A2 (a rewording).
    pairs = [c.split("=", 1) if "=" in c else (c, c) for c in checks]
    data["checks"] = [{"id": cid, "text": texts[key]} for cid, key in pairs]
    return yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=10**6)


def calibration_jsonl(labels: dict[str, str] = LABELS) -> str:
    return "".join(json.dumps({"id": i, "input": f"design {i}", "output": f"review {i}", "label": lab}) + "\n"
                   for i, lab in labels.items())


def verdicts_jsonl(texts: dict[str, str], fails: dict[str, set[str]] = FAILS,
                   labels: dict[str, str] = LABELS) -> str:
    lines = []
    for cid, text in texts.items():
        for item in labels:
            answer = "no" if cid in fails.get(item, set()) else "yes"
            lines.append(json.dumps({"item": item, "check_text": text, "answer": answer}) + "\n")
    return "".join(lines)


class Git:
    def __init__(self, path: Path) -> None:
        self.path = path
        # What a commit made now is dated (None: the wall clock). A scenario dates commits by the
        # fake GitHub's clock, so a commit made after a label was applied reads as later than it.
        self.clock: Callable[[], str] | None = None

    def __call__(self, *args: str) -> str:
        env = None
        if self.clock is not None:
            when = self.clock()
            env = {**os.environ, "GIT_COMMITTER_DATE": when, "GIT_AUTHOR_DATE": when}
        proc = subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
                              cwd=self.path, capture_output=True, text=True, check=True, env=env)
        return proc.stdout.strip()

    def commit(self, files: dict[str, str | None], message: str = "change") -> str:
        removed = [name for name, text in files.items() if text is None]
        written = [name for name, text in files.items() if text is not None]
        for name in written:
            target = self.path / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(files[name] or "", encoding="utf-8")
        # One git call per kind (not one per file): most of a scenario's time was git start-ups.
        if removed:
            self("rm", "-q", "--", *removed)
        if written:
            self("add", "--", *written)
        self("commit", "-q", "-m", message)
        return self("rev-parse", "HEAD")


@dataclass
class Result:
    code: int
    stdout: str
    stderr: str
    outputs: dict[str, str]
    summary: str
    workspace: Path

    def report(self) -> dict:
        return json.loads((self.workspace / self.outputs["report"]).read_text())


def parse_outputs(text: str) -> dict[str, str]:
    out: dict[str, str] = {}
    lines = iter(text.splitlines())
    for line in lines:
        if "<<" in line and "=" not in line.split("<<")[0]:
            name, delimiter = line.split("<<", 1)
            value = []
            for inner in lines:
                if inner == delimiter:
                    break
                value.append(inner)
            out[name] = "\n".join(value)
        elif "=" in line:
            name, value = line.split("=", 1)
            out[name] = value
    return out


@dataclass
class Scenario:
    git: Git
    fake: FakeGitHub
    tmp: Path
    base_sha: str

    def __post_init__(self) -> None:
        # A second after GitHub's last stamp: later than anything stamped so far, and not later
        # than what is stamped next (the base tip's date is what tells a moved base).
        self.git.clock = lambda: (self.fake.clock + timedelta(seconds=1)).strftime("%Y-%m-%dT%H:%M:%SZ")

    def sender(self, action: str, labels: tuple[str, ...]) -> str:
        """Who triggered the event: for a label's, whoever the fake's last such label event names."""
        if action in ("labeled", "unlabeled") and labels:
            for event in reversed(self.fake.label_events):
                if event["event"] == action and event.get("label", {}).get("name") == labels[-1]:
                    return str((event.get("actor") or {}).get("login") or AUTHOR)
        return AUTHOR

    def event(self, head_sha: str, *, fork: bool = False, labels: tuple[str, ...] = (), action: str | None = None,
              extra: dict | None = None, sender: str | None = None) -> Path:
        """The payload; with `labels`, by default the run of the `labeled` event of the last one."""
        self.fake.head_sha = head_sha
        head_repo = "mallory/rubrics" if fork else REPO
        action = action or ("labeled" if labels else "synchronize")
        payload = {
            "sender": {"login": sender or self.sender(action, labels), "type": "User"},
            "action": action,
            **({"label": {"name": labels[-1] if labels else "", "color": "ededed"}}
               if action in ("labeled", "unlabeled") else {}),
            "number": self.fake.pr_number,
            "pull_request": {
                "number": self.fake.pr_number,
                "html_url": f"https://github.test/{REPO}/pull/{self.fake.pr_number}",
                "base": {"ref": "main", "sha": self.base_sha, "repo": {"full_name": REPO, "fork": False}},
                "head": {"ref": "pr", "sha": head_sha, "repo": {"full_name": head_repo, "fork": fork}},
                "labels": [{"name": name} for name in labels],
            },
            "repository": {"full_name": REPO},
            **(extra or {}),
        }
        path = self.tmp / f"event-{head_sha[:7]}.json"
        path.write_text(json.dumps(payload), encoding="utf-8")
        return path

    def env(self, event: Path, workspace: Path, token: str = TOKEN, **inputs: str) -> dict[str, str]:
        outputs = self.tmp / "outputs.txt"
        summary = self.tmp / "summary.md"
        for f in (outputs, summary):
            f.write_text("")
        env = {
            "PATH": os.environ["PATH"],
            "HOME": str(self.tmp / "home"),
            "GITHUB_ACTIONS": "true",
            "GITHUB_EVENT_NAME": "pull_request",
            "GITHUB_EVENT_PATH": str(event),
            "GITHUB_REPOSITORY": REPO,
            "GITHUB_API_URL": self.fake.url,
            "GITHUB_SERVER_URL": "https://github.test",
            "GITHUB_RUN_ID": "42",
            "GITHUB_WORKFLOW_REF": f"{REPO}/{WORKFLOW}@refs/pull/{self.fake.pr_number}/merge",
            "GITHUB_WORKSPACE": str(workspace),
            "GITHUB_OUTPUT": str(outputs),
            "GITHUB_STEP_SUMMARY": str(summary),
            "INPUT_GITHUB_TOKEN": token,
            "RUBRIC_GATE_SECONDS_BETWEEN_WRITES": "0",
        }
        env.update({f"INPUT_{k.upper()}": v for k, v in inputs.items()})
        return env

    def run(self, head_sha: str, *, workspace: Path | None = None, fork: bool = False,
            labels: tuple[str, ...] = (), token: str = TOKEN, command: list[str] | None = None,
            env_extra: dict[str, str] | None = None, event_name: str = "pull_request", action: str | None = None,
            payload: dict | None = None, sender: str | None = None, **inputs: str) -> Result:
        """`payload`: fields merged into the event (or, for `merge_group`, the whole event).
        GitHub's workflow run for the event is recorded first, as GitHub creates it: by the
        event's `sender` (for a label event, the last such label event's actor)."""
        workspace = workspace or self.git.path
        event = self.event(head_sha, fork=fork, labels=labels, action=action, extra=payload, sender=sender)
        if event_name == "merge_group":
            event.write_text(json.dumps(payload), encoding="utf-8")
        elif int((env_extra or {}).get("GITHUB_RUN_ATTEMPT", "1")) == 1:  # a re-run creates no new run
            data = json.loads(event.read_text(encoding="utf-8"))
            self.fake.record_workflow_run(head_sha=head_sha, actor=data["sender"]["login"], event=event_name,
                                          head_repo="mallory/rubrics" if fork else REPO, fork=fork)
        env = self.env(event, workspace, token, **inputs)
        env["GITHUB_EVENT_NAME"] = event_name
        env.update(env_extra or {})
        if command is None and not os.environ.get("RUBRIC_GATE_TEST_SUBPROCESS"):
            code, stdout, stderr = run_in_process(env, workspace)
        else:
            proc = subprocess.run(command or [sys.executable, "-m", "rubric_gate", "action"], cwd=workspace,
                                  env=env, capture_output=True, text=True, timeout=60, check=False)
            code, stdout, stderr = proc.returncode, proc.stdout, proc.stderr
        return Result(code, stdout, stderr,
                      parse_outputs(Path(env["GITHUB_OUTPUT"]).read_text()),
                      Path(env["GITHUB_STEP_SUMMARY"]).read_text(), workspace)


def run_in_process(env: dict[str, str], workspace: Path) -> tuple[int, str, str]:
    """`rubric-gate action` in this process: the same entry point and error handling as the
    console script, without a Python start-up per run (set RUBRIC_GATE_TEST_SUBPROCESS=1 to
    run every scenario as a subprocess instead)."""
    from rubric_gate.cli.main import main

    out, err = io.StringIO(), io.StringIO()
    with (mock.patch.dict(os.environ, env, clear=True), contextlib.chdir(workspace),
          contextlib.redirect_stdout(out), contextlib.redirect_stderr(err)):
        code = main(["action"])
    return code, out.getvalue(), err.getvalue()
