"""The `judge` and `check --judge` commands as a user runs them, including kill -9 (a subprocess) and resume."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from rubric_gate.verdicts import VerdictStore
from tests.fakes.llm import FakeLLM
from tests.judges.conftest import expected, make_items, make_rubric, write_project
from tests.support.cli import rubric_gate

JUDGE = "anthropic:claude-haiku-4-5"


cli = rubric_gate  # in this process; the kill -9 test starts its own subprocess


def judge_args(*extra: str) -> list[str]:
    return ["judge", "--rubric", "rubric.yaml", "--verdicts", "verdicts.jsonl", "--root", ".", *extra]


def test_judge_command_then_rerun_makes_no_call(fake: FakeLLM, tmp_path: Path) -> None:
    write_project(tmp_path, make_rubric(), make_items(), judge=JUDGE)
    first = cli(tmp_path, *judge_args("--json"))
    assert first.returncode == 0, first.stderr
    assert json.loads(first.stdout)["calls"] == 40
    second = cli(tmp_path, *judge_args())
    assert second.returncode == 0 and "0 calls, 40 verdicts reused" in second.stdout
    assert fake.received == 40
    assert "SECRET" not in first.stdout + first.stderr + second.stdout + second.stderr


def test_dry_run_and_max_calls(fake: FakeLLM, tmp_path: Path) -> None:
    write_project(tmp_path, make_rubric(), make_items(), judge=JUDGE)
    dry = cli(tmp_path, *judge_args("--dry-run"))
    assert dry.returncode == 0 and "would make 40 calls" in dry.stdout and "~$" in dry.stdout
    refused = cli(tmp_path, *judge_args("--max-calls", "10"))
    assert refused.returncode == 2
    assert "40 calls needed, above --max-calls 10" in refused.stderr
    assert fake.received == 0 and not (tmp_path / "verdicts.jsonl").exists()


def test_auth_failure_exits_2_with_one_line(fake: FakeLLM, tmp_path: Path) -> None:
    fake.rules = {"mentions": "401"}
    write_project(tmp_path, make_rubric(), make_items(), judge=JUDGE)
    proc = cli(tmp_path, *judge_args())
    assert proc.returncode == 2
    assert proc.stderr.strip().count("\n") == 0 and "authentication failed" in proc.stderr
    assert "SECRET" not in proc.stderr


def test_malformed_replies_exit_2_and_save_nothing_guessed(fake: FakeLLM, tmp_path: Path) -> None:
    fake.rules = {"mentions kiwi": "nonjson"}
    write_project(tmp_path, make_rubric(), make_items(), judge=JUDGE)
    proc = cli(tmp_path, *judge_args())
    assert proc.returncode == 2 and "8 pairs have no valid answer, none guessed (8 invalid)" in proc.stderr
    saved = VerdictStore.load(tmp_path / "verdicts.jsonl")
    assert len(saved) == 32 and all("kiwi" not in v.check_text for v in saved)


def test_check_with_judge_end_to_end(fake: FakeLLM, tmp_path: Path) -> None:
    base = make_rubric(["apple", "pear", "plum"])
    write_project(tmp_path, base, make_items())
    (tmp_path / "base.yaml").write_text((tmp_path / "rubric.yaml").read_text())
    head = make_rubric(["apple", "pear", "fig"])  # k2 reworded: plum -> fig
    write_project(tmp_path, head, make_items())
    args = ["check", "--base", "base.yaml", "--head", "rubric.yaml", "--root", ".", "--format", "json"]
    replay = cli(tmp_path, *args)
    assert replay.returncode == 2 and "--judge" in replay.stderr
    proc = cli(tmp_path, *args, "--judge", JUDGE)
    assert proc.returncode == 1, proc.stderr
    report = json.loads(proc.stdout)
    # No item mentions fig: the reworded check fails r7, the one correct item the base passed.
    assert [(c["check"], c["change"], c["decision"]) for c in report["changes"]] == [("k2", "modified", "rejected")]
    assert report["judging"]["calls"] == 32 and "32 calls" in report["judging"]["summary"]
    assert fake.received == 32
    again = json.loads(cli(tmp_path, *args, "--judge", JUDGE).stdout)
    assert again["judging"]["calls"] == 0 and again["decision"] == report["decision"]
    assert fake.received == 32
    markdown = cli(tmp_path, *args[:-2], "--format", "markdown", "--judge", JUDGE).stdout
    assert "0 calls, 32 verdicts reused" in markdown
    # --replay ignores the judge: live verdicts carry judge fields and still replay.
    assert cli(tmp_path, *args, "--replay").returncode == 1


def test_kill_9_mid_run_resumes_repeating_only_in_flight(fake: FakeLLM, tmp_path: Path) -> None:
    fake.delay = 0.15
    concurrency = 4
    items = make_items(12)
    write_project(tmp_path, make_rubric(), items, judge=JUDGE)
    verdicts = tmp_path / "verdicts.jsonl"
    proc = subprocess.Popen([sys.executable, "-m", "rubric_gate", *judge_args("--concurrency", str(concurrency))],
                            cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if verdicts.exists() and verdicts.read_text().count("\n") >= 15:
            break
        time.sleep(0.01)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    first_run_calls = fake.received
    saved_before = len(VerdictStore.load(verdicts))
    assert 15 <= saved_before < 60
    resume = cli(tmp_path, *judge_args("--concurrency", str(concurrency)))
    assert resume.returncode == 0, resume.stderr
    store = VerdictStore.load(verdicts)
    keys = {(v.check_text, v.item) for v in store}
    assert len(keys) == 60
    repeated = fake.received - 60
    assert repeated <= concurrency, (first_run_calls, saved_before, fake.received)
    assert first_run_calls - saved_before <= concurrency
    by_id = {i.id: i.output for i in items.items}
    assert all(v.answer == expected(v.check_text, by_id[v.item]) for v in store)


def test_check_judge_never_reuses_verdicts_judged_under_another_task(fake: FakeLLM, tmp_path: Path) -> None:
    """Two rubrics sharing a verdict store and check texts: the helper's verdicts were judged
    under its task, so `check --judge` on the strict rubric judges every pair again."""
    write_project(tmp_path, make_rubric(["apple", "pear"]), make_items())
    helper = (tmp_path / "rubric.yaml").read_text().replace("task: List fruit.", "task: Lenient helper task.")
    (tmp_path / "helper.yaml").write_text(helper.replace("id: fruit", "id: helper"))
    first = cli(tmp_path, "judge", "--rubric", "helper.yaml", "--verdicts", "verdicts.jsonl", "--root", ".",
                "--judge", JUDGE)
    assert first.returncode == 0, first.stderr
    assert fake.received == 16
    (tmp_path / "base.yaml").write_text((tmp_path / "rubric.yaml").read_text())
    proc = cli(tmp_path, "check", "--base", "base.yaml", "--head", "rubric.yaml", "--root", ".", "--format", "json",
               "--judge", JUDGE)
    assert proc.returncode == 0, proc.stderr  # base and head are the same rubric
    assert json.loads(proc.stdout)["judging"]["calls"] == 16 and fake.received == 32
    tasks = {v.task_hash for v in VerdictStore.load(tmp_path / "verdicts.jsonl")}
    assert len(tasks) == 2 and None not in tasks


def test_an_unexpected_exception_in_check_exits_3_and_names_the_traceback_file(tmp_path: Path) -> None:
    from unittest import mock

    from rubric_gate.cli.main import main

    write_project(tmp_path, make_rubric(), make_items())
    with (mock.patch("rubric_gate.cli.check_cmd.load_rubric", side_effect=KeyError("bug")),
          mock.patch.dict(os.environ, {"RUBRIC_GATE_CRASH_LOG_DIR": str(tmp_path / "logs")}),
          mock.patch("sys.stderr", new_callable=lambda: __import__("io").StringIO()) as err):
        code = main(["check", "--base", "rubric.yaml", "--head", "rubric.yaml", "--root", str(tmp_path)])
    assert code == 3
    (line,) = err.getvalue().splitlines()
    (log,) = (tmp_path / "logs").glob("rubric-gate-crash-*.log")
    assert "KeyError" in line and str(log) in line and "Traceback" in log.read_text()


def test_judge_json_prints_one_object_with_the_totals_when_it_fails(fake: FakeLLM, tmp_path: Path) -> None:
    fake.rules = {"mentions kiwi": "cutoff"}
    write_project(tmp_path, make_rubric(), make_items(), judge=JUDGE)
    proc = cli(tmp_path, *judge_args("--json"))
    data = json.loads(proc.stdout)  # exactly one JSON document on stdout
    assert proc.returncode == 2 and data["decision"] is None and data["error"]["exit_code"] == 2
    assert "8 pairs have no valid answer, none guessed (8 cut off)" in data["error"]["message"]
    assert len(data["error"]["failures"]) == 8 and "cut off at 400 tokens" in data["error"]["failures"][0]
    (totals,) = data["totals"]
    assert totals["calls"] == 32 + 8 * 3 and totals["failed"] == 8 and totals["retries"] == 16
    assert totals["input_tokens"] > 0 and totals["cost_usd"] > 0 and totals["failure_causes"] == {"cut off": 8}
    # In text, the totals are said before the error line (this rerun stops early: every reply cut off).
    text = cli(tmp_path, *judge_args())
    first, last = text.stderr.splitlines()[0], text.stderr.splitlines()[-1]
    assert text.returncode == 2 and first.startswith(f"{JUDGE}: ") and "32 verdicts reused" in first
    assert "retries" in first and last.startswith("rubric-gate: error: ") and "stopped early" in last


def test_several_judges_are_all_asked_after_one_fails(fake: FakeLLM, tmp_path: Path) -> None:
    fake.rules = {"mentions kiwi": "nonjson"}
    write_project(tmp_path, make_rubric(), make_items(), judge=JUDGE)
    other = "openai:gpt-4o-mini"
    proc = cli(tmp_path, *judge_args("--judge", JUDGE, "--judge", other, "--json"))
    data = json.loads(proc.stdout)
    assert proc.returncode == 2 and data["error"]["message"].count("pairs have no valid answer") == 2
    assert {t["judge"] for t in data["totals"]} == {JUDGE, other}  # the second judge was asked
    saved = VerdictStore.load(tmp_path / "verdicts.jsonl")
    assert {v.judge for v in saved} == {JUDGE, other} and len(saved) == 64


def test_several_judges_json_is_one_object(fake: FakeLLM, tmp_path: Path) -> None:
    write_project(tmp_path, make_rubric(), make_items(), judge=JUDGE)
    proc = cli(tmp_path, *judge_args("--judge", JUDGE, "--judge", "openai:gpt-4o-mini", "--json"))
    data = json.loads(proc.stdout)
    assert proc.returncode == 0 and data["calls"] == 80 and [j["calls"] for j in data["judges"]] == [40, 40]
