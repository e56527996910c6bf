"""A judge change judged through the batch APIs: one batch per judge, each of the pairs it lacks."""

from __future__ import annotations

import json
from pathlib import Path

from tests.batch.test_batch import batches  # noqa: F401  (the fake batch server fixture)
from tests.fakes.batches import FakeBatches
from tests.judges.conftest import make_items, make_rubric, write_project
from tests.judges.test_cli import cli

OLD, NEW = "anthropic:claude-haiku-4-5", "openai:gpt-4o-mini"


def test_both_judges_are_judged_in_batches_then_compared(batches: FakeBatches, tmp_path: Path) -> None:  # noqa: F811
    write_project(tmp_path, make_rubric(["apple", "pear", "plum"]), make_items())
    args = ["check", "--base", "rubric.yaml", "--head", "rubric.yaml", "--root", ".", "--format", "json",
            "--judge", NEW, "--against-judge", OLD, "--batch", "--poll-interval", "0.05"]
    proc = cli(tmp_path, *args)
    assert proc.returncode == 0, proc.stderr
    change = json.loads(proc.stdout)["judge_change"]
    assert len(batches.created) == 2 and [len(batches.batches[b].requests) for b in batches.created] == [24, 24]
    assert change["decision"] == "pass" and all(c["kappa"]["value"] in (1.0, None) for c in change["checks"])
    again = cli(tmp_path, *args)  # every pair of both judges is stored: no batch, the same answer
    assert again.returncode == 0 and len(batches.created) == 2
