"""`judge --batch` and `check --batch` as subprocesses: kill -9 mid-batch, --no-wait, gating."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from rubric_gate.batch import journal_path
from rubric_gate.verdicts import VerdictStore
from tests.batch.test_batch import batches  # noqa: F401  (the fake batch server fixture)
from tests.fakes.batches import FakeBatches
from tests.judges.conftest import expected, make_items, make_rubric, write_project
from tests.judges.test_cli import cli, judge_args

JUDGE = "anthropic:claude-haiku-4-5"


def test_kill_9_after_submit_then_rerun_collects_without_a_new_batch(batches: FakeBatches,  # noqa: F811
                                                                      tmp_path: Path) -> None:
    batches.hold = True
    items = make_items()
    write_project(tmp_path, make_rubric(), items, judge=JUDGE)
    journal = journal_path(tmp_path / "verdicts.jsonl")
    proc = subprocess.Popen([sys.executable, "-m", "rubric_gate", *judge_args("--batch", "--poll-interval", "0.05")],
                            cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not (journal.exists() and '"event":"submitted"' in journal.read_text()):
        time.sleep(0.02)
    time.sleep(0.2)  # let it poll the held batch at least once
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert len(batches.created) == 1 and not (tmp_path / "verdicts.jsonl").exists()
    batches.hold = False
    resumed = cli(tmp_path, *judge_args("--batch", "--poll-interval", "0.05", "--json"))
    assert resumed.returncode == 0, resumed.stderr
    assert len(batches.created) == 1  # collected, not resubmitted
    assert json.loads(resumed.stdout)["batch"]["collected"] == batches.created
    assert f"batch {batches.created[0]} (40 requests): 40 succeeded, 0 errored, 0 expired, 0 processing" \
        in resumed.stderr
    saved = list(VerdictStore.load(tmp_path / "verdicts.jsonl"))
    by_id = {i.id: i.output for i in items.items}
    assert len(saved) == 40 and len({(v.check_text, v.item) for v in saved}) == 40
    assert all(v.answer == expected(v.check_text, by_id[v.item]) and v.batch == batches.created[0] for v in saved)
    before = batches.total_requests
    again = cli(tmp_path, *judge_args("--batch"))
    assert again.returncode == 0 and "0 batch requests answered, 40 verdicts reused" in again.stdout
    assert batches.total_requests == before  # a rerun after the end makes no request at all


def test_no_wait_dry_run_and_max_calls(batches: FakeBatches, tmp_path: Path) -> None:  # noqa: F811
    batches.hold = True
    write_project(tmp_path, make_rubric(), make_items(), judge=JUDGE)
    dry = cli(tmp_path, *judge_args("--batch", "--dry-run"))
    assert dry.returncode == 0 and "would send 40 batch requests" in dry.stdout and "at batch prices" in dry.stdout
    refused = cli(tmp_path, *judge_args("--batch", "--max-calls", "10"))
    assert refused.returncode == 2 and "40 batch requests needed, above --max-calls 10" in refused.stderr
    assert batches.total_requests == 0
    misuse = cli(tmp_path, *judge_args("--no-wait"))
    assert misuse.returncode == 2 and "--no-wait only applies with --batch" in misuse.stderr
    submitted = cli(tmp_path, *judge_args("--batch", "--no-wait"))
    assert submitted.returncode == 0, submitted.stderr
    assert "judging 40 pairs in batch (1 batches processing), re-run to collect" in submitted.stdout
    assert f"submitted batch {batches.created[0]}: 40 requests, 40 pairs" in submitted.stderr
    assert len(batches.created) == 1 and not (tmp_path / "verdicts.jsonl").exists()
    assert "SECRET" not in submitted.stdout + submitted.stderr


def test_rejected_key_exits_2_with_one_line(batches: FakeBatches, tmp_path: Path) -> None:  # noqa: F811
    batches.reject_status = 401
    write_project(tmp_path, make_rubric(), make_items(), judge=JUDGE)
    proc = cli(tmp_path, *judge_args("--batch", "--poll-interval", "0.05"))
    assert proc.returncode == 2 and proc.stderr.strip().count("\n") == 0, proc.stderr
    assert "authentication failed" in proc.stderr and "SECRET" not in proc.stderr
    assert not (tmp_path / "verdicts.jsonl").exists()


def test_check_with_batch_judges_then_gates(batches: FakeBatches, tmp_path: Path) -> None:  # noqa: F811
    base = make_rubric(["apple", "pear", "plum"])
    write_project(tmp_path, base, make_items())
    (tmp_path / "base.yaml").write_text((tmp_path / "rubric.yaml").read_text())
    write_project(tmp_path, make_rubric(["apple", "pear", "fig"]), make_items())
    args = ["check", "--base", "base.yaml", "--head", "rubric.yaml", "--root", ".", "--format", "json",
            "--judge", JUDGE, "--batch", "--poll-interval", "0.05"]
    proc = cli(tmp_path, *args)
    assert proc.returncode in (0, 1), proc.stderr
    report = json.loads(proc.stdout)
    assert report["judging"]["calls"] == 32 and report["judging"]["batch"]["complete"] is True
    assert len(batches.created) == 1 and len(batches.batches[batches.created[0]].requests) == 32
    live = cli(tmp_path, *args[:-3])  # a live judge reuses the batch verdicts: no call
    assert json.loads(live.stdout)["decision"] == report["decision"]
    assert len(batches.created) == 1
