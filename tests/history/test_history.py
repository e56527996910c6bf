"""`rubric-gate history` on a real git repository: a rename and a deleted-then-restored check."""

from __future__ import annotations

import json
import re
from pathlib import Path

from markupsafe import escape

from tests.support.project import BASE_YAML, Project, write_example

DROP_A = BASE_YAML.replace("  - id: A\n    text: The output satisfies requirement A.\n    origin: label\n    source: [R1]\n", "")
ADD_E = BASE_YAML + "  - id: E\n    text: The output satisfies requirement E.\n"


def _commit(project: Project, message: str) -> str:
    project.git("add", "-A")
    project.git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", message)
    return project.git("rev-parse", "HEAD").strip()


def _repo(root: Path) -> tuple[Project, list[str]]:
    project = write_example(root)
    project.git("init", "-q", "-b", "main")
    commits = [_commit(project, "start")]
    project.write("rubrics/demo.yaml", DROP_A.replace("version: 1", "version: 2"))  # deletes A (frozen, unique)
    commits.append(_commit(project, "drop A"))
    project.write("rubrics/demo.yaml", BASE_YAML.replace("version: 1", "version: 3"))  # A restored
    commits.append(_commit(project, "restore A"))
    project.git("mv", "rubrics/demo.yaml", "rubrics/incident.yaml")
    commits.append(_commit(project, "rename the file"))
    project.write("rubrics/incident.yaml", ADD_E.replace("version: 1", "version: 4"))  # E fails correct R4
    commits.append(_commit(project, "add E"))
    return project, commits


def test_history_json_follows_the_rename_and_replays_the_gate(tmp_path: Path) -> None:
    project, commits = _repo(tmp_path)
    proc = project.run("history", "rubrics/incident.yaml", "--format", "json")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    revisions = data["revisions"]
    assert [r["commit"] for r in revisions] == commits  # oldest first, across the rename
    assert [r["version"] for r in revisions] == ["1", "2", "3", "3", "4"]
    assert [r["path"] for r in revisions] == ["rubrics/demo.yaml"] * 3 + ["rubrics/incident.yaml"] * 2
    rates = [(r["rates"]["calibration"]["correct_passed"]["count"], r["rates"]["calibration"]["flawed_caught"]["count"])
             for r in revisions]
    assert rates == [(1, 3), (1, 2), (1, 3), (1, 3), (1, 3)]  # dropping A lost R1; E fails R4, already failed by D
    assert revisions[0]["changes"] == [] and revisions[0]["gate"] is None
    dropped = revisions[1]["changes"]
    assert [(c["check"], c["change"], c["decision"]) for c in dropped] == [("A", "deleted", "rejected")]
    assert "cannot be deleted" in dropped[0]["reason"] and "unique catch" in dropped[0]["reason"]
    assert revisions[1]["gate"] == "fail"
    restored = revisions[2]["changes"]
    assert [(c["check"], c["change"], c["decision"]) for c in restored] == [("A", "added", "accepted")]
    assert revisions[3]["changes"] == [] and revisions[3]["gate"] is None  # a pure file rename
    assert [(c["check"], c["decision"]) for c in revisions[4]["changes"]] == [("E", "rejected")]  # blame
    ci = revisions[0]["rates"]["calibration"]["correct_passed"]["ci95"]
    assert ci[0] < 0.5 < ci[1]


def test_history_gates_option_replays_another_gate(tmp_path: Path) -> None:
    project, _ = _repo(tmp_path)
    data = json.loads(project.run("history", "rubrics/incident.yaml", "--gates", "R", "--format", "json").stdout)
    assert data["gates"] == "R"
    assert data["revisions"][1]["changes"][0]["decision"] == "rejected"  # R: flawed caught drops 3 -> 2
    assert data["revisions"][4]["changes"][0]["decision"] == "accepted"  # R: no rate drops when E is added
    bad = project.run("history", "rubrics/incident.yaml", "--gates", "Q")
    assert bad.returncode == 2 and "unknown gate 'Q'" in bad.stderr


def test_history_with_an_evaluation_split_and_text_and_html(tmp_path: Path) -> None:
    project, _ = _repo(tmp_path)
    path = project.root / "calibration/demo.jsonl"
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    lines[4]["split"] = "evaluation"  # R5 (correct) held out
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    data = json.loads(project.run("history", "rubrics/incident.yaml", "--format", "json").stdout)
    assert data["splits"] == ["calibration", "evaluation"]
    first = data["revisions"][0]["rates"]
    assert first["evaluation"]["correct_passed"]["total"] == 1 and first["calibration"]["correct_passed"]["total"] == 1
    text = project.run("history", "rubrics/incident.yaml").stdout
    assert "deleted A: rejected" in text and "added A: accepted" in text
    assert "file renamed from rubrics/demo.yaml" in text and "cannot be deleted" in text
    html = project.run("history", "rubrics/incident.yaml", "--format", "html").stdout
    # two rates on the calibration split; the evaluation split has no flawed item, so one line there
    assert html.count("<svg") == 2 and html.count("<polyline") == 3
    assert "gate fail" in html


def test_history_text_is_inert(tmp_path: Path) -> None:
    project, _ = _repo(tmp_path)
    hostile = ADD_E.replace("version: 1", 'version: "<img src=x onerror=alert(1)>"')
    project.write("rubrics/incident.yaml", hostile)
    _commit(project, "hostile version")
    html = project.run("history", "rubrics/incident.yaml", "--format", "html").stdout
    assert "<img" not in html and str(escape("<img src=x onerror=alert(1)>")) in html
    assert not re.search(r"<script", html)


def test_a_revision_that_does_not_load_is_listed_not_fatal(tmp_path: Path) -> None:
    project, _ = _repo(tmp_path)
    project.write("rubrics/incident.yaml", "id: [broken\n")
    broken = _commit(project, "broken yaml")
    project.write("rubrics/incident.yaml", ADD_E.replace("version: 1", "version: 5"))
    _commit(project, "fixed")
    proc = project.run("history", "rubrics/incident.yaml", "--format", "json")
    assert proc.returncode == 0, proc.stderr
    revisions = json.loads(proc.stdout)["revisions"]
    bad = next(r for r in revisions if r["commit"] == broken)
    assert bad["version"] is None and bad["rates"] == {} and bad["error"]
    assert revisions[-1]["version"] == "5" and revisions[-1]["changes"] == []  # diffed against version 4


def test_history_text_fits_an_80_column_terminal_and_stays_whole_in_a_pipe(tmp_path: Path, monkeypatch) -> None:
    project, _ = _repo(tmp_path)
    whole = project.run("history", "rubrics/incident.yaml").stdout
    assert max(len(line) for line in whole.splitlines()) > 80  # a pipe keeps the reasons whole, for grep
    monkeypatch.setenv("COLUMNS", "80")
    wrapped = project.run("history", "rubrics/incident.yaml").stdout
    assert max(len(line.rstrip()) for line in wrapped.splitlines()) <= 80
    legend = "correct: correct outputs passed; flawed: flawed outputs caught"
    assert " ".join(wrapped.partition(legend)[1:]).split() == " ".join(whole.partition(legend)[1:]).split()
    # a reason's continuation stays under the reason, not at column 0
    assert all(line.startswith(("         ", "correct:", "Wilson")) or re.match(r"[0-9a-f]{8} ", line)
               for line in wrapped.partition(legend)[2].splitlines()[1:] if line)


def test_history_of_one_revision_says_one_revision(tmp_path: Path) -> None:
    project = write_example(tmp_path)
    project.git("init", "-q", "-b", "main")
    _commit(project, "start")
    assert "rubrics/demo.yaml: 1 revision, gates S+P" in project.run("history", "rubrics/demo.yaml").stdout
