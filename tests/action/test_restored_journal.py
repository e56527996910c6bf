"""The batch journal a PR's run may restore: a planted, garbled or swapped journal entry is never read
as the judge's answers and never crashes the run.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.action.harness import (
    DELETE_A,
    RUBRIC,
    TEXTS,
    Scenario,
    conclusion_of,
    keyword_labels,
    rejected_run,
    rubric_yaml,
    run_gated,
)

# -- 2. the batch journal a PR's cache scope restores -------------------------------------------

EXTRA = {"X": "Is key rotation automated?"}


def _pending_then(scenario: Scenario, mutate, fake_errors: bool = False) -> None:
    """A batch run goes pending with X added (X answers no on R1, the keyword judge); the journal
    restored for the next run is `mutate(lines)`d; the next commit drops X and deletes A."""
    from tests.fakes.batches import FakeBatches

    keyword_labels(scenario)
    batches = FakeBatches().start()
    try:
        env = {"OPENAI_BASE_URL": batches.openai_url, "OPENAI_API_KEY": "sk-test",
               "RUBRIC_GATE_BATCH_POLL_SECONDS": "0.05"}
        inputs = {"judge": "openai:fake-model", "batch": "true", "env_extra": env}
        first = scenario.git.commit({RUBRIC: rubric_yaml(["A", "B", "C", "D", "X"], extra=EXTRA)}, "add X")
        batches.hold = True
        assert run_gated(scenario, first, batch_wait="0", **inputs).outputs["decision"] == "pending"
        journal = scenario.git.path / ".rubric-gate" / "cache" / "verdicts.jsonl.batches"
        lines = journal.read_text().splitlines()
        journal.write_text("".join(line + "\n" for line in mutate(lines)))
        batches.hold = False
        second = scenario.git.commit(DELETE_A, "drop X; delete A")
        if fake_errors:  # the fake provider's handler raises on an id it does not hold (stderr)
            result = scenario.run(second, batch_wait="1", **inputs)
            assert result.code in (1, 2) and "internal error" not in result.stdout, result.stdout
            assert conclusion_of(scenario, second) == "failure", result.stdout
        else:
            rejected_run(scenario, second, batch_wait="1", **inputs)
    finally:
        batches.stop()


def _swap_custom_ids(lines: list[str]) -> list[str]:
    records = [json.loads(line) for line in lines]
    b = next(r for r in records if r.get("event") == "request" and any(
        p[0] == "R1" and p[3] == TEXTS["B"] for p in r["pairs"]))
    x = next(r for r in records if r.get("event") == "request" and any(
        p[0] == "R1" and p[3] == EXTRA["X"] for p in r["pairs"]))
    if b is x:  # one request holds both: swap the pairs inside it
        bi = next(i for i, p in enumerate(b["pairs"]) if p[0] == "R1" and p[3] == TEXTS["B"])
        xi = next(i for i, p in enumerate(b["pairs"]) if p[0] == "R1" and p[3] == EXTRA["X"])
        b["pairs"][bi], b["pairs"][xi] = b["pairs"][xi], b["pairs"][bi]
    else:
        b["custom_id"], x["custom_id"] = x["custom_id"], b["custom_id"]
    return [json.dumps(r) for r in records]


def _strip_digests(lines: list[str]) -> list[str]:
    out = []
    for record in map(json.loads, _swap_custom_ids(lines)):
        if record.get("event") == "request":
            record["custom_id"] = record["custom_id"].rsplit("-", 1)[0]
        out.append(json.dumps(record))
    return out


def _duplicate_swapped(lines: list[str]) -> list[str]:
    return lines + [line for line in _swap_custom_ids(lines) if json.loads(line).get("event") == "request"]


def _relabel_x_as_b(lines: list[str]) -> list[str]:
    """X's pair keeps X's key fields but names check B's id and text (the stored key is B's)."""
    records = [json.loads(line) for line in lines]
    for r in records:
        if r.get("event") == "request":
            for p in r["pairs"]:
                if p[3] == EXTRA["X"]:
                    p[2], p[3] = "B", TEXTS["B"]
    return [json.dumps(r) for r in records]


def _second_batch_reusing_ids(lines: list[str]) -> list[str]:
    """A second journaled batch (another local) naming the same provider batch, with swapped pairs."""
    records = [json.loads(line) for line in _swap_custom_ids(lines)]
    out = list(lines)
    for r in records:
        if r.get("local"):
            r["local"] = "rg000000000000"
        out.append(json.dumps(r))
    return out


def _drop_closed(lines: list[str]) -> list[str]:
    return [line for line in lines if json.loads(line).get("event") != "closed"]


@pytest.mark.parametrize("mutate", [
    pytest.param(lambda lines: lines, id="control"),
    pytest.param(_swap_custom_ids, id="swap-custom-ids"),
    pytest.param(_strip_digests, id="ids-without-digest"),
    pytest.param(_duplicate_swapped, id="duplicate-request-lines"),
    pytest.param(_relabel_x_as_b, id="relabel-pair"),
    pytest.param(_second_batch_reusing_ids, id="second-batch-same-ids"),
    pytest.param(_drop_closed, id="drop-closed"),
])
def test_a_planted_batch_journal(scenario: Scenario, mutate) -> None:
    _pending_then(scenario, mutate)


GARBAGE = [
    "{not json",
    "[]",
    "null",
    '"string"',
    '{"event": "request"}',
    '{"event": "request", "local": 5, "custom_id": null, "pairs": 7}',
    '{"event": "submitted"}',
    '{"event": "open", "local": null}',
    '{"event": "closed", "local": "x", "batch_id": {"a": 1}}',
]


@pytest.mark.parametrize("line", GARBAGE)
def test_a_garbage_journal_line_is_not_a_crash(scenario: Scenario, line: str) -> None:
    def mutate(lines: list[str]) -> list[str]:
        return [*lines, line]
    _pending_then(scenario, mutate)


@pytest.mark.parametrize("how", ["pairs-not-lists", "short-pairs", "int-fields", "local-request-of-garbage"])
def test_a_malformed_request_line_of_the_open_batch(scenario: Scenario, how: str) -> None:
    def mutate(lines: list[str]) -> list[str]:
        records = [json.loads(line) for line in lines]
        req = next(r for r in records if r.get("event") == "request")
        if how == "pairs-not-lists":
            req["pairs"] = ["R1", "R2"]
        elif how == "short-pairs":
            req["pairs"] = [p[:2] for p in req["pairs"]]
        elif how == "int-fields":
            req["pairs"] = [[1, 2, 3, 4, 5] for _ in req["pairs"]]
        else:
            records.append({"event": "request", "local": req["local"], "custom_id": req["custom_id"], "pairs": None})
        return [json.dumps(r) for r in records]
    _pending_then(scenario, mutate)


def test_a_planted_huge_request_number_does_not_allocate_by_its_value(tmp_path: Path) -> None:
    import subprocess
    import sys

    code = (
        "import resource, sys\n"
        "resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))\n"
        "from pathlib import Path\n"
        "from rubric_gate.batch.journal import RequestIndex\n"
        f"index = RequestIndex(Path({str(tmp_path / 'j')!r}), 'rgabcdef012345')\n"
        "index.add('rgabcdef012345-999999999', 0)\n"
        "print(len(index))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2] / "src")}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr[-500:]


@pytest.mark.parametrize("batch_id", ["batch_missing", "../files/file_1", "batch_1/../../files", "", "x" * 5000])
def test_a_planted_open_batch_with_a_batch_id_the_provider_does_not_hold(scenario: Scenario, batch_id: str) -> None:
    def mutate(lines: list[str]) -> list[str]:
        records = [json.loads(line) for line in lines]
        opened = next(r for r in records if r.get("event") == "open")
        req = next(r for r in records if r.get("event") == "request")
        local = "rg0123456789ab"
        return [*lines, json.dumps({**opened, "local": local}),
                json.dumps({**req, "local": local, "custom_id": local + req["custom_id"][len(req["local"]):]}),
                json.dumps({"event": "submitted", "local": local, "batch_id": batch_id})]
    _pending_then(scenario, mutate, fake_errors=True)


def test_a_planted_second_journal_entry_for_the_real_batch_with_its_pairs_swapped(scenario: Scenario) -> None:
    """The real batch_id under a planted local whose request lines keep the provider's custom_ids."""
    def mutate(lines: list[str]) -> list[str]:
        records = [json.loads(line) for line in _swap_custom_ids(lines)]
        opened = next(r for r in records if r.get("event") == "open")
        sub = next(r for r in records if r.get("event") == "submitted")
        local = "rg0123456789ab"
        extra = [{**opened, "local": local}]
        extra += [{**r, "local": local} for r in records if r.get("event") == "request"]
        extra.append({**sub, "local": local})
        return [*lines, *map(json.dumps, extra)]
    _pending_then(scenario, mutate)
