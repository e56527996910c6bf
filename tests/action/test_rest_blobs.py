"""A shallow checkout reads verdict stores through the GitHub REST API's blobs endpoint: the raw
media type, streamed to the spool file (never held in memory), and checked against the blob id
the tree listed before anything is parsed or indexed under that id."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from rubric_gate.action.commits import blob_cache
from rubric_gate.verdicts.blobs import default_cache
from tests.action.harness import (
    CALIBRATION,
    LABELS,
    REPO,
    RUBRIC,
    TEXTS,
    VERDICTS,
    Scenario,
    rubric_yaml,
    verdicts_jsonl,
)

NEW = "Does the design name an owner for each key?"


@pytest.fixture(autouse=True)
def _new_process(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each run as a process of its own: no blob parsed or spooled by an earlier one."""
    default_cache().clear()
    monkeypatch.setattr(blob_cache, "_spool", None)


def _fresh_process() -> None:
    default_cache().clear()
    blob_cache._spool = None


def _shallow(scenario: Scenario, name: str = "workspace") -> Path:
    workspace = scenario.tmp / name
    subprocess.run(["git", "clone", "-q", "--depth", "1", "--branch", "pr", scenario.git.path.as_uri(),
                    str(workspace)], check=True, capture_output=True)
    return workspace


def _blob_id(scenario: Scenario, sha: str, path: str) -> str:
    return scenario.git("rev-parse", f"{sha}:{path}")


def _large_store(lines: int) -> str:
    """The demo store, then `lines` more verdicts for other items of the same checks (unlabeled
    items: the gate never reads them, but every byte of them is read and parsed)."""
    extra = "".join(json.dumps({"item": f"X{n:07d}", "check_text": TEXTS["ABCD"[n % 4]], "answer": "yes",
                                "quote": "q" * 60}) + "\n" for n in range(lines))
    return verdicts_jsonl(TEXTS) + extra


def test_a_large_store_in_a_shallow_checkout_is_gated_as_with_history(scenario: Scenario) -> None:
    base = scenario.git.commit({VERDICTS: _large_store(30_000)}, "a store over the contents API's 1 MB")
    scenario.base_sha = scenario.fake.base_sha = base
    assert (scenario.git.path / VERDICTS).stat().st_size > 3 * 1024 * 1024
    store = (scenario.git.path / VERDICTS).read_text()
    head = scenario.git.commit({
        RUBRIC: rubric_yaml(["A", "B", "C", "D", "N"], extra={"N": NEW}),
        VERDICTS: store + "".join(json.dumps({"item": item, "check_text": NEW, "answer": "no" if item == "R3" else "yes"})
                                  + "\n" for item in LABELS),
    }, "add N with its verdicts")
    with_history = scenario.run(head)
    assert "Traceback" not in with_history.stderr and with_history.code == 0, with_history.stderr
    _fresh_process()
    scenario.fake.blob_reads.clear()
    workspace = _shallow(scenario)
    shallow = scenario.run(head, workspace=workspace, verdict_cache=".rest-cache")
    assert "Traceback" not in shallow.stderr, shallow.stderr
    assert with_history.report()["files_from"] == "git" and shallow.report()["files_from"] == "rest"
    assert shallow.code == with_history.code == 0
    assert shallow.report()["rubrics"] == with_history.report()["rubrics"]
    reads = dict(scenario.fake.blob_reads)
    for sha in (base, head):  # each side's store: its raw bytes, once
        assert reads[_blob_id(scenario, sha, VERDICTS)] == "application/vnd.github.raw+json"
    stores = {_blob_id(scenario, sha, VERDICTS) for sha in (base, head)}
    assert sorted(s for s, _ in scenario.fake.blob_reads if s in stores) == sorted(stores)
    # A gated run indexes into a directory of its own, never the cache a PR's scope restores
    # (a planted index would rewrite the base's record): nothing is left for the save step.
    assert not list((workspace / ".rest-cache").glob("index/blob-*.sqlite"))


def test_the_rest_reader_streams_a_blob_without_holding_it(scenario: Scenario, tmp_path: Path) -> None:
    """In a process of its own (the fake's server allocates the blob too): the reader's traced
    peak while writing an 8 MB blob stays under a quarter of it. The JSON the API sends by
    default holds it base64-encoded, then decoded: over twice its size."""
    head = scenario.git.commit({VERDICTS: _large_store(80_000)}, "an 8 MB store")
    size = (scenario.git.path / VERDICTS).stat().st_size
    assert size > 8 * 1024 * 1024
    out = tmp_path / "blob.jsonl"
    script = textwrap.dedent(f"""
        import tracemalloc
        from rubric_gate.action.github.client import connect
        from rubric_gate.action.commits.sources import RestReader
        reader = RestReader(connect("write-token", {scenario.fake.url!r}, {REPO!r}))
        reader.blob_id({head!r}, {VERDICTS!r})  # the tree listing, before the measured part
        tracemalloc.start()
        with open({str(out)!r}, "wb") as handle:
            assert reader.write_blob({head!r}, {VERDICTS!r}, handle)
        print(tracemalloc.get_traced_memory()[1])
    """)
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    assert out.read_bytes() == (scenario.git.path / VERDICTS).read_bytes()
    print(f"traced peak {int(proc.stdout):,} B for a {size:,} B blob")
    assert int(proc.stdout) < size / 4
    assert scenario.fake.blob_reads == [(_blob_id(scenario, head, VERDICTS), "application/vnd.github.raw+json")]


def test_bytes_that_are_not_the_listed_blob_stop_the_run_and_are_never_indexed(scenario: Scenario) -> None:
    head = scenario.git.commit({RUBRIC: rubric_yaml(["A=A2", "B", "C"])}, "reword A, delete D")
    blob = _blob_id(scenario, head, VERDICTS)
    scenario.fake.altered_blobs.add(blob)
    workspace = _shallow(scenario)
    cache = workspace / ".rest-cache"
    result = scenario.run(head, workspace=workspace, verdict_cache=".rest-cache")
    assert result.code == 2, result.stderr  # not decided: the store could not be read
    (rubric,) = result.report()["rubrics"]
    size = len(scenario.git("show", f"{head}:{VERDICTS}")) + 1
    # The base's store does not load, so the rubric is scored as new, on the proposed snapshot:
    # the file this PR does not change is read at the base tip, and the error names that commit.
    assert rubric["error"] == (f"{scenario.base_sha[:7]}:{VERDICTS}: the GitHub API sent {size:,} bytes that are not blob "
                               f"{blob[:12]} ({size:,} bytes); re-run the job")
    assert f"::error::{RUBRIC}: {rubric['error']}" in result.stdout.splitlines()
    assert "Traceback" not in result.stdout + result.stderr
    assert not list(cache.glob("index/blob-*.sqlite"))
    assert blob not in default_cache()
    # The transfer fixed, the same checkout reads it.
    scenario.fake.altered_blobs.clear()
    _fresh_process()
    again = scenario.run(head, workspace=workspace, verdict_cache=".rest-cache")
    assert again.code == 1, again.stderr
    assert {c["check"]: c["decision"] for c in again.report()["rubrics"][0]["report"]["changes"]} == {
        "A": "rejected", "D": "accepted"}


def test_small_files_still_come_as_json(scenario: Scenario) -> None:
    """Rubrics and calibration sets are read whole anyway: the default JSON (base64) answer."""
    head = scenario.git.commit({RUBRIC: rubric_yaml(["A=A2", "B", "C"])}, "reword A, delete D")
    assert scenario.run(head, workspace=_shallow(scenario)).code == 1
    accepts = dict(scenario.fake.blob_reads)
    assert accepts[_blob_id(scenario, head, VERDICTS)] == "application/vnd.github.raw+json"
    for path in (RUBRIC, CALIBRATION):
        assert accepts[_blob_id(scenario, head, path)] not in ("application/vnd.github.raw+json",
                                                                "application/vnd.github.raw")
