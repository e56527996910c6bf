"""Calibration items may carry a free `meta` object: kept, shown in JSON, never judged."""

from __future__ import annotations

import json

from rubric_gate.calibration import CalibrationItem
from rubric_gate.judges.prompt import render_per_check
from tests.support.project import Project


def _with_meta(project: Project, extra: dict) -> None:
    path = project.root / "calibration/demo.jsonl"
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    lines[0].update(extra)
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))


def test_meta_is_kept_and_shown_in_json(project: Project) -> None:
    meta = {"annotator": "ana", "source": "FaithBench", "batch": 3}
    _with_meta(project, {"meta": meta})
    proc = project.run("attribute", "rubrics/demo.yaml", "--format", "json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["item_meta"] == {"R1": meta}


def test_meta_is_not_judged() -> None:
    plain = CalibrationItem(id="a", input="in", output="out", label="pass")
    tagged = CalibrationItem(id="a", input="in", output="out", label="pass", meta={"annotator": "SECRET-NAME"})
    assert plain.content_hash == tagged.content_hash  # verdicts stay valid when meta is added
    assert "SECRET-NAME" not in render_per_check("t", tagged.input, tagged.output, "check")


def test_other_unknown_keys_stay_errors(project: Project) -> None:
    _with_meta(project, {"annotator": "ana"})
    proc = project.run("attribute", "rubrics/demo.yaml")
    assert proc.returncode == 2
    assert "calibration/demo.jsonl:1" in proc.stderr and "unknown key 'annotator'" in proc.stderr
    assert "meta)" in proc.stderr
