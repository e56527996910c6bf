"""The action's end-to-end harness: a real git repository, a fake GitHub, a runner, and the scenario
helpers every test module of the action shares (no test module imports another's helpers)."""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import subprocess
import sys
import unicodedata
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from unittest import mock

import yaml

from rubric_gate.action.cache.provenance import CACHE_ARTIFACT
from rubric_gate.calibration.model import item_content_hash
from rubric_gate.judges import PROMPT_VERSION
from rubric_gate.verdicts import task_hash
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

    def differences(self) -> dict[str, dict]:
        """report.json's classified differences by kind (the last of a kind, when several files have one)."""
        return {d["kind"]: d for d in self.report()["differences"]}


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
                "user": {"login": self.fake.author, "type": "User"},  # who opened it
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


# -- scenario helpers shared by the test modules ----------------------------------------------

def saved_cache_path(scenario: Scenario) -> Path:
    return scenario.git.path / ".rubric-gate" / "cache" / "verdicts.jsonl"


def warm_main(scenario: Scenario) -> list[dict]:
    """The push run on main judges every pair into the cache: its lines, as `actions/cache` saves them."""
    scenario.fake.judge = truthful_judge
    push = scenario.run(scenario.base_sha, judge=JUDGE, event_name="push",
                        env_extra={**judge_env(scenario), "GITHUB_SHA": scenario.base_sha})
    assert push.code == 0, push.stdout + push.stderr
    lines = [json.loads(line) for line in saved_cache_path(scenario).read_text().splitlines()]
    assert len(lines) == 20 and all(v["judge"] == JUDGE and v["task_hash"] for v in lines)  # A-D on R1-R5
    return lines


def with_cache_lines_appended(lines: list[dict]) -> str:
    """The follow-up PR: the cache's verdicts appended to the rubric's verdict file."""
    return verdicts_jsonl(TEXTS) + "".join(json.dumps(v) + "\n" for v in lines)


def standard_findings(result) -> list[dict]:
    return result.report()["standard"]


class ActionsRuns:
    """The fake GitHub's Actions runs and artifacts (list runs, a run's artifacts, the zip behind a
    redirect), as the REST API shapes them: each run with its event, branch and head repository."""

    def __init__(self, scenario: Scenario) -> None:
        self.fake = scenario.fake
        self.base_sha = scenario.base_sha  # a push run of the branch ran on one of its commits
        self.runs: list[dict] = []
        self.zips: dict[int, bytes] = {}
        answer = self.fake._answer

        def _answer(method: str, path: str, token: str | None, body: object) -> tuple[int, object]:
            found = self._route(method, path)
            return answer(method, path, token, body) if found is None else found

        self.fake._answer = _answer  # type: ignore[method-assign]

    def add_run(self, *, event: str, branch: str, head_repo: str = REPO, verdicts: str | None = None,
                head_sha: str | None = None) -> int:
        run_id = self.fake.new_id()
        api = f"{self.fake.url}/repos/{REPO}"
        self.runs.insert(0, {"id": run_id, "event": event, "head_branch": branch,
                             "head_sha": head_sha or self.base_sha,
                             "status": "completed", "conclusion": "success",
                             "head_repository": {"full_name": head_repo, "name": head_repo.split("/")[1]},
                             "artifacts_url": f"{api}/actions/runs/{run_id}/artifacts",
                             "url": f"{api}/actions/runs/{run_id}"})
        if verdicts is not None:
            buffer = io.BytesIO()
            with zipfile.ZipFile(buffer, "w") as archive:
                archive.writestr("verdicts.jsonl", verdicts)
            self.zips[run_id] = buffer.getvalue()
        return run_id

    def _route(self, method: str, path: str) -> tuple[int, object] | None:
        prefix = f"/repos/{REPO}/actions"
        if method != "GET":
            return None
        query = self.fake._query
        if path == f"{prefix}/runs":
            runs = [r for r in self.runs if query.get("branch") in (None, r["head_branch"])
                    and query.get("event") in (None, r["event"])]
            return 200, {"total_count": len(runs), "workflow_runs": runs}
        match = re.fullmatch(rf"{prefix}/runs/(\d+)/artifacts", path)
        if match:
            run_id = int(match.group(1))
            arts = [{"id": run_id, "name": CACHE_ARTIFACT, "expired": False, "size_in_bytes": len(self.zips[run_id]),
                     "archive_download_url": f"{self.fake.url}{prefix}/artifacts/{run_id}/zip"}] \
                if run_id in self.zips else []
            return 200, {"total_count": len(arts), "artifacts": arts}
        match = re.fullmatch(rf"{prefix}/artifacts/(\d+)/zip", path)
        if match:  # a redirect to short-lived storage, as the API answers
            self.fake._headers["Location"] = f"{self.fake.url}/storage/{match.group(1)}.zip"
            return 302, {}
        match = re.fullmatch(r"/storage/(\d+)\.zip", path)
        if match:
            return 200, self.zips[int(match.group(1))]
        return None


def base_ref_env(scenario: Scenario) -> dict[str, str]:
    return {**judge_env(scenario), "GITHUB_BASE_REF": "main"}


def jsonl_of_verdicts(verdicts: list[dict]) -> str:
    return "".join(json.dumps(v) + "\n" for v in verdicts)


def publish_warm_cache(scenario: Scenario) -> dict[str, str]:
    """What the workflow's push run uploads after the warm-up (`rubric-gate-verdict-cache`): the
    cache file as an artifact of a push run on main. The env a PR's run then reads it with."""
    ActionsRuns(scenario).add_run(event="push", branch="main", verdicts=saved_cache_path(scenario).read_text())
    return {"GITHUB_BASE_REF": "main"}


def writer_override(scenario: Scenario) -> None:
    scenario.fake.label_events = [{"event": "labeled", "actor": {"login": "maintainer"}, "label": {"name": OVERRIDE}}]
    scenario.fake.permissions = {"maintainer": "write"}


def commit_on_main(scenario: Scenario, files: dict[str, str | None], message: str = "main moves on") -> str:
    """Commit on main after the PR branched; the event's base sha is main's new tip."""
    scenario.git("checkout", "-q", "main")
    sha = scenario.git.commit(files, message)
    scenario.git("checkout", "-q", "pr")
    scenario.base_sha = scenario.fake.base_sha = sha
    return sha


def with_origin(text: str, **origins: str) -> str:
    data = yaml.safe_load(text)
    for check in data["checks"]:
        if check["id"] in origins:
            check["origin"] = origins[check["id"]]
    return yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=10**6)


NO_WAIT = {"RUBRIC_GATE_MERGE_POLL_SECONDS": "0"}


def shallow_clone(scenario: Scenario) -> Path:
    """The PR's head alone (`fetch-depth: 1`): git cannot merge, so files are read through the API."""
    workspace = scenario.tmp / "shallow"
    subprocess.run(["git", "clone", "-q", "--depth", "1", "--branch", "pr", scenario.git.path.as_uri(), str(workspace)],
                   check=True, capture_output=True)
    return workspace


def run_with_reader(scenario: Scenario, head: str, reader: str, **kwargs) -> Result:
    workspace = shallow_clone(scenario) if reader == "rest" else None
    env = {**NO_WAIT, **kwargs.pop("env_extra", {})}
    result = run_gated(scenario, head, workspace=workspace, env_extra=env, **kwargs)
    assert result.report()["files_from"] == reader, result.stdout
    return result


def criss_cross(scenario: Scenario) -> str:
    """main: O1 (A retired) -> m1 (README); feat: O1 -> f1 (A back); the tip merges feat. The PR
    starts at m1 and merges f1 keeping m1's tree (`-s ours`), then changes the README: the tip
    and the head have two merge bases, m1 and f1, and git's merge (from a virtual base that has
    A) deletes A, which no diff from one merge base shows."""
    o1 = commit_on_main(scenario, DELETE_A, "O1: A retired for now")
    scenario.git("checkout", "-q", "-b", "feat", o1)
    f1 = scenario.git.commit({RUBRIC: rubric_yaml(["A", "B", "C", "D"])}, "f1: A back")
    scenario.git("checkout", "-q", "main")
    m1 = scenario.git.commit({"README.md": "m1\n"}, "m1")
    scenario.git("merge", "-q", "--no-ff", "-m", "Merge feat", "feat")
    scenario.base_sha = scenario.fake.base_sha = scenario.git("rev-parse", "HEAD")
    scenario.git("checkout", "-q", "-B", "pr", m1)
    scenario.git("merge", "-q", "-s", "ours", "-m", "merge main's f1 in, keeping ours", f1)
    head = scenario.git.commit({"README.md": "a harmless change\n"}, "a harmless change")
    tree = scenario.git("merge-tree", "--write-tree", scenario.base_sha, head).split()[0]
    assert "id: A\n" not in scenario.git("show", f"{tree}:{RUBRIC}")  # what would land: A deleted
    return head


FRUIT_TASK = "List the fruit in the basket, naming apple, pear and plum when present."
FRUIT_ITEMS = [("c1", "apple, pear, plum.", "pass"), ("c2", "pear and apple and plum and kiwi", "pass"),
         ("f1", "pear plum kiwi", "fail"), ("f2", "apple plum kiwi", "fail"), ("f3", "apple pear kiwi", "fail")]


def fruit_rubric(checks: list[tuple[str, str]]) -> str:
    lines = ["id: fruit", "version: 1", f"task: {FRUIT_TASK}", "calibration: calibration/fruit.jsonl",
             "verdicts: calibration/fruit.verdicts.jsonl", "checks:"]
    for check_id, text in checks:
        lines += [f"  - id: {check_id}", f"    text: {text}"]
    return "\n".join(lines) + "\n"


def both_fail(scenario: Scenario) -> tuple[str, dict[int, dict[str, str]]]:
    """A head deleting A, proposed as #7 into main and as #8 into staging (main plus a note):
    the gate rejects the deletion in both."""
    main = scenario.base_sha
    scenario.git("checkout", "-q", "-b", "staging", main)
    staging = scenario.git.commit({"notes.txt": "staging\n"}, "staging")
    scenario.git("checkout", "-q", "pr")
    head = scenario.git.commit({RUBRIC: rubric_yaml(["B", "C", "D"])}, "delete A")
    return head, {7: {"base": main, "head": head, "base_ref": "main"},
                  8: {"base": staging, "head": head, "base_ref": "staging"}}


class Pulls:
    """Runs the action as either PR, each with its own labels (what the fake serves per number)."""

    def __init__(self, scenario: Scenario, pulls: dict[int, dict[str, str]]) -> None:
        self.scenario, self.pulls = scenario, pulls
        self.events: dict[int, list[dict]] = {number: [] for number in pulls}
        scenario.fake.permissions = {"maintainer": "write", "mallory": "read"}

    def label(self, number: int, event: str = "labeled", who: str = "maintainer") -> None:
        self.events[number].append({"event": event, "actor": {"login": who}, "label": {"name": OVERRIDE}})

    def run(self, number: int, **kwargs):
        fake = self.scenario.fake
        fake.pr_number = number
        self.scenario.base_sha = fake.base_sha = self.pulls[number]["base"]
        fake.other_pulls = {m: p for m, p in self.pulls.items() if m != number}
        fake.label_events = self.events[number]
        fake.other_label_events = {m: e for m, e in self.events.items() if m != number}
        return run_gated(self.scenario, self.pulls[number]["head"], **kwargs)


def label_by_writer(scenario: Scenario, event: str = "labeled") -> None:
    scenario.fake.label_events.append({"event": event, "actor": {"login": "maintainer"}, "label": {"name": OVERRIDE}})
    scenario.fake.permissions = {"maintainer": "write"}


def merge_group(scenario: Scenario, head: str) -> dict:
    return {"action": "checks_requested", "repository": {"full_name": "acme/rubrics"},
            "merge_group": {"head_sha": head, "head_ref": f"refs/heads/gh-readonly-queue/main/pr-7-{scenario.base_sha}",
                            "base_sha": scenario.base_sha, "base_ref": "refs/heads/main",
                            "head_commit": {"id": head, "tree_id": head, "message": "Merge pull request #7",
                                            "timestamp": "2026-01-01T00:00:00Z",
                                            "author": {"name": "t", "email": "t@example.com"},
                                            "committer": {"name": "t", "email": "t@example.com"}}}}


NEWLINE_RUBRIC = "rubrics/team\nsecurity/demo.yaml"


def labeled_items() -> list[dict]:
    return [json.loads(line) for line in calibration_jsonl().splitlines()]


def jsonl_of_items(items: list[dict]) -> str:
    return "".join(json.dumps(i) + "\n" for i in items)


def marked_comment_body(scenario: Scenario) -> str:
    return scenario.fake.marked_comments()[0]["body"]


def truthful_judge_strict(prompt: str) -> str:
    check = next(cid for cid, text in TEXTS.items() if text in prompt)
    item = next(i for i in LABELS if f"review {i}" in prompt)
    return "no" if check in FAILS[item] else "yes"


def rubric_with_keys(checks: list[str], **keys: str) -> str:
    data = yaml.safe_load(rubric_yaml(checks))
    data.update(keys)
    return yaml.safe_dump(data, sort_keys=False, allow_unicode=True)


def shallow_workspace(scenario: Scenario) -> Path:
    workspace = scenario.tmp / "workspace"
    subprocess.run(["git", "clone", "-q", "--depth", "1", "--branch", "pr", scenario.git.path.as_uri(), str(workspace)],
                   check=True, capture_output=True)
    return workspace


JUDGE = "openai:fake-model"


def route_closed(*codes: int) -> bool:
    """A route in steps is closed when one step stops: rejected (1) or an input error (2); any
    other exit (3 is a crash) closes nothing."""
    return all(code in (0, 1, 2) for code in codes) and any(code in (1, 2) for code in codes)


def judge_env(scenario: Scenario) -> dict[str, str]:
    return {"OPENAI_BASE_URL": f"{scenario.fake.url}/v1", "OPENAI_API_KEY": "sk-test"}


def truthful_judge(prompt: str) -> str:
    check = next((cid for cid, text in TEXTS.items() if text in prompt), None)
    item = next((i for i in LABELS if f"review {i}" in prompt), None)
    if check is None or item is None:
        return "yes"
    return "no" if check in FAILS[item] else "yes"


def branch_from(scenario: Scenario, name: str, start: str, files: dict[str, str | None], message: str) -> str:
    scenario.git("checkout", "-q", "-b", name, start)
    sha = scenario.git.commit(files, message)
    return sha


def merge_into_main(scenario: Scenario, *branches: str) -> str:
    scenario.git("checkout", "-q", "main")
    for branch in branches:
        scenario.git("merge", "-q", "--no-ff", "-m", f"Merge {branch}", branch)  # raises on a conflict
    sha = scenario.git("rev-parse", "HEAD")
    scenario.base_sha = scenario.fake.base_sha = sha
    return sha


def run_gated(scenario: Scenario, head: str, **kwargs):
    result = scenario.run(head, **kwargs)
    assert "Traceback" not in result.stderr, result.stderr
    return result


def verdict_line(check: str, item: str, answer: str, **extra: object) -> str:
    return json.dumps({"item": item, "check_text": TEXTS.get(check, check), "answer": answer, **extra}) + "\n"


def content_hash_of(item: str) -> str:
    return item_content_hash(f"design {item}", f"review {item}")


TASK = "Review a cloud security design."


def keyed_line(check: str, item: str, answer: str, **extra: object) -> str:
    key = {"judge": JUDGE, "prompt": PROMPT_VERSION, "task_hash": task_hash(TASK), "item_hash": content_hash_of(item)}
    return verdict_line(check, item, answer, **{**key, **extra})


def merge_pr(scenario: Scenario) -> str:
    """Fast-forward main to the PR branch (the PR merged); the next PR starts there."""
    scenario.git("checkout", "-q", "main")
    scenario.git("merge", "-q", "--ff-only", "pr")
    sha = scenario.git("rev-parse", "HEAD")
    scenario.base_sha = scenario.fake.base_sha = sha
    scenario.git("checkout", "-q", "pr")
    return sha


def judged_by(scenario: Scenario, judge=truthful_judge) -> dict:
    scenario.fake.judge = judge
    return {"judge": JUDGE, "env_extra": judge_env(scenario)}


def two_prs(scenario: Scenario, first: dict[str, str | None], second: dict[str, str | None], **inputs):
    """PR 1 commits `first` and merges; PR 2 commits `second`. Both results."""
    head = scenario.git.commit(first, "PR 1")
    one = run_gated(scenario, head, **inputs)
    merge_pr(scenario)
    head = scenario.git.commit(second, "PR 2")
    two = run_gated(scenario, head, **inputs)
    return one, two


def not_both_green(one, two) -> None:
    assert one.code != 0 or two.code != 0, one.stdout + one.stderr + two.stdout + two.stderr


OVERRIDE = "rubric-gate:override"


def apply_label(scenario: Scenario, event: str, name: str = OVERRIDE, who: str = "maintainer") -> None:
    scenario.fake.label_events.append({"event": event, "actor": {"login": who}, "label": {"name": name}})
    scenario.fake.permissions = {"maintainer": "write", "mallory": "read"}


DELETE_A = {RUBRIC: rubric_yaml(["B", "C", "D"])}
EXTRA = {"X": "Is key rotation automated?", "A3": "Is every stored byte encrypted?"}


def latest_check_run(scenario: Scenario, head: str) -> dict | None:
    runs = [r for r in scenario.fake.check_runs.values() if r["head_sha"] == head]
    return max(runs, key=lambda r: r["id"]) if runs else None


def conclusion_of(scenario: Scenario, head: str) -> str | None:
    run = latest_check_run(scenario, head)
    return None if run is None else run.get("conclusion")


def flip_answer(record: str, check: str, item: str, answer: str) -> str:
    old = json.dumps({"item": item, "check_text": TEXTS[check], "answer": "no" if answer == "yes" else "yes"})
    new = json.dumps({"item": item, "check_text": TEXTS[check], "answer": answer})
    assert old in record
    return record.replace(old, new)


def labeled_item_line(item: str, label: str, content: str | None = None, **extra: object) -> str:
    content = content or item
    return json.dumps({"id": item, "input": f"design {content}", "output": f"review {content}", "label": label,
                       **extra}) + "\n"


OTHER = "rubrics/other.yaml"


def other_rubric(checks: list[str], rubric_id: str = "other") -> str:
    return rubric_yaml(checks, extra=EXTRA).replace("id: demo", f"id: {rubric_id}")


def assert_comment_inert(scenario: Scenario, result, head: str, needle: str = "evil") -> None:
    from pathlib import Path

    from tests.support import gfm

    body = (Path(result.workspace) / result.outputs["comment"]).read_text()
    root = gfm.parse(body)
    run_link = "https://github.test/acme/rubrics/actions/runs/42"
    live = gfm.live_spans(root, allowed_links=(run_link,), own=(scenario.base_sha[:7], head[:7]))
    assert not [s for s in live if "evil" in s[1] or "octocat" in s[1] or s[0] in ("image", "html")], live
    shown = "".join(ch for ch in root.text() if unicodedata.category(ch) != "Cf")
    assert needle in shown, body


RUN_LINK = "https://github.test/acme/rubrics/actions/runs/42"


def rejected_run(scenario: Scenario, head: str, code: int = 1, **kwargs) -> Result:
    """The run exits `code` and the head's newest check run is a failure."""
    result = run_gated(scenario, head, **kwargs)
    assert result.code == code, result.stdout + result.stderr
    assert conclusion_of(scenario, head) == "failure", result.stdout
    return result


def not_green(scenario: Scenario, head: str, **kwargs) -> Result:
    """Exit 1 or 2 (never 0 or a crash) and no green check run on the head."""
    result = run_gated(scenario, head, **kwargs)
    assert result.code in (1, 2), result.stdout + result.stderr
    assert conclusion_of(scenario, head) in ("failure", None), result.stdout
    return result


KEYWORD_OUTPUTS = {"R1": "privilege justified year", "R2": "justified year", "R3": "rest",
                   "R4": "rest privilege justified", "R5": "rest privilege justified year"}


def keyword_labels(scenario: Scenario) -> None:
    """Item outputs a keyword judge (tests/fakes/llm.py: yes when the check's last word is in the
    output) answers as FAILS says: A-D truthful."""
    cal = "".join(json.dumps({"id": i, "input": f"design {i}", "output": o, "label": LABELS[i]}) + "\n"
                  for i, o in KEYWORD_OUTPUTS.items())
    scenario.git("checkout", "-q", "main")
    base = scenario.git.commit({CALIBRATION: cal}, "outputs a keyword judge reads")
    scenario.git("checkout", "-q", "pr")
    scenario.git("merge", "-q", "--ff-only", "main")
    scenario.base_sha = scenario.fake.base_sha = base


BIDI = "\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c\u202a\u202b\u202c\u202d"


def surfaces(scenario: Scenario, result: Result) -> dict[str, str]:
    """Everything GitHub renders as Markdown from this run: the comment, the job summary, the
    check run's summary."""
    body = (Path(result.workspace) / result.outputs["comment"]).read_text() if result.outputs.get("comment") else ""
    run = latest_check_run(scenario, scenario.fake.head_sha)
    return {"comment": body, "summary": result.summary,
            "check run": (run or {}).get("output", {}).get("summary", "")}


def assert_surfaces_inert(scenario: Scenario, result: Result, head: str, *, shown: str | None = None) -> None:
    from tests.support import gfm

    for where, text in surfaces(scenario, result).items():
        root = gfm.parse(text)
        live = gfm.live_spans(root, allowed_links=(RUN_LINK,), own=(scenario.base_sha[:7], head[:7]))
        assert not [s for s in live if "evil" in s[1] or "octocat" in s[1] or s[0] in ("image", "html")], (where, live)
        assert not set(BIDI) & set(text), (where, [line for line in text.splitlines() if set(BIDI) & set(line)])
        assert "\x1b" not in text and "\x07" not in text, where
        if shown is not None and where == "comment":
            assert shown in "".join(ch for ch in root.text() if unicodedata.category(ch) != "Cf"), text[:3000]


def with_rubric_id(rubric_id: str, checks: list[str] | None = None) -> str:
    text = rubric_yaml(checks or ["A", "B", "C", "D"])
    assert text.startswith("id: demo\n")
    return f"id: {json.dumps(rubric_id, ensure_ascii=False)}\n" + text[len("id: demo\n"):]


# -- a reviewer's approval (`trust.approval`) and the sound rewording it vouches for ----------------

REWORDED = "Does the design encrypt every data store at rest with managed keys?"
# Who may review, as the collaborator permission API answers (triage reads as read there).
REVIEWERS = {"maintainer": "write", "admin": "admin", "reader": "read", "triager": "triage", "author": "write",
             "second": "triage", "github-actions[bot]": "write"}


def sound_rewording() -> dict[str, str | None]:
    """Reword A; record the new text's verdicts: "no" wherever A said "no" (R1, R2). Sound on its
    records, held on trusted evidence until a writer approves the head (A alone catches R1)."""
    fails = {item: checks | ({"N"} if "A" in checks else set()) for item, checks in FAILS.items()}
    return {RUBRIC: rubric_yaml(["A=N", "B", "C", "D"], extra={"N": REWORDED}),
            VERDICTS: verdicts_jsonl(TEXTS) + verdicts_jsonl({"N": REWORDED}, fails)}


def reword_with_records(scenario: Scenario) -> str:
    scenario.fake.permissions.update(REVIEWERS)
    return scenario.git.commit(sound_rewording(), "reword A")


def review_run(scenario: Scenario, head: str, review: dict, *, action: str = "submitted", **kwargs) -> Result:
    """The `pull_request_review` run GitHub starts for a review submitted (or dismissed)."""
    return scenario.run(head, event_name="pull_request_review", action=action, payload={"review": review},
                        sender=review["user"]["login"], **kwargs)


def approve(scenario: Scenario, head: str, who: str = "maintainer", *, on: str | None = None, **kwargs) -> Result:
    return review_run(scenario, head, scenario.fake.review(who, "APPROVED", on or head), **kwargs)


def words_of(result: Result) -> str:
    """The job summary as a reader sees its words (mentions carry a zero-width space)."""
    return result.summary.replace("\u200b", "")


def held_changes(result: Result) -> list[tuple[str, str]]:
    withheld = result.report()["rubrics"][0]["report"]["withheld"]
    return [] if withheld is None else [(h["check"], h["change"]) for h in withheld["held"]]


ROOT = Path(__file__).resolve().parents[2]
