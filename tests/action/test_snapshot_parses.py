"""Each blob is parsed once per run: a 12-rubric PR over one shared calibration set and verdict
store, with the base branch moved on since it branched (merge base, base tip and head all read),
parses each distinct rubric, calibration and verdict blob once, counted by instrumenting the
parsers themselves (not the memo that is meant to spare them)."""

from __future__ import annotations

from collections import Counter
from unittest import mock

from rubric_gate.action.commits.snapshot import default_memo
from rubric_gate.calibration import index as calibration_index
from rubric_gate.calibration import load as calibration_load
from rubric_gate.sources import yaml_lines
from rubric_gate.verdicts.blobs import default_cache
from tests.action.harness import (
    LABELS,
    RUBRIC,
    TEXTS,
    VERDICTS,
    Scenario,
    commit_on_main,
    rubric_yaml,
    verdicts_jsonl,
)

NEW_TEXT = "Does the design name an owner for each key?"
RUBRICS = [RUBRIC, *(f"rubrics/r{n:02d}.yaml" for n in range(1, 12))]


def _rubric(path: str, checks: list[str]) -> str:
    rubric_id = "demo" if path == RUBRIC else path.removeprefix("rubrics/").removesuffix(".yaml")
    return rubric_yaml(checks, extra={"N": NEW_TEXT}).replace("id: demo", f"id: {rubric_id}", 1)


def test_a_12_rubric_pr_over_one_shared_store_parses_each_blob_once(scenario: Scenario) -> None:
    base = scenario.git.commit({p: _rubric(p, ["A", "B", "C", "D"]) for p in RUBRICS[1:]}, "eleven more rubrics")
    scenario.base_sha = scenario.fake.base_sha = base
    scenario.git("checkout", "-q", "main")
    scenario.git("merge", "-q", "--ff-only", "pr")
    scenario.git("checkout", "-q", "pr")
    commit_on_main(scenario, {"README.md": "main moved on\n"})  # the tip differs from the merge base
    added = "".join(f'{{"item": "{i}", "check_text": "{NEW_TEXT}", "answer": "yes"}}\n' for i in LABELS)
    head = scenario.git.commit({**{p: _rubric(p, ["A", "B", "C", "D", "N"]) for p in RUBRICS},
                                VERDICTS: verdicts_jsonl(TEXTS) + added}, "add N to all twelve, with its verdicts")

    yaml_parses: Counter[str] = Counter()
    calibration_parses: Counter[str] = Counter()
    compose, exact, cached = yaml_lines._compose_fast, calibration_load._parse_exactly, calibration_index.items_from_cache

    def counted_compose(text):  # type: ignore[no-untyped-def]
        yaml_parses[text] += 1
        return compose(text)

    def counted_exact(source, *args, **kwargs):  # type: ignore[no-untyped-def]
        calibration_parses[source.text] += 1
        return exact(source, *args, **kwargs)

    def counted_cached(text, hashes):  # type: ignore[no-untyped-def]
        calibration_parses[text] += 1
        return cached(text, hashes)

    default_memo().clear()
    default_cache().clear()
    verdicts = default_cache()
    before = verdicts.parses + verdicts.extensions + verdicts.indexed
    with (mock.patch.object(yaml_lines, "_compose_fast", counted_compose),
          mock.patch.object(calibration_load, "_parse_exactly", counted_exact),
          mock.patch.object(calibration_index, "items_from_cache", counted_cached)):
        result = scenario.run(head)
    assert "Traceback" not in result.stderr, result.stderr
    report = result.report()
    assert [r["file"] for r in report["rubrics"]] == RUBRICS, result.stdout
    assert result.code == 0, [(r["error"], r["failures"]) for r in report["rubrics"]]

    texts = {scenario.git("show", f"{sha}:{path}") + "\n" for sha in (scenario.base_sha, head) for path in RUBRICS}
    rubric_counts = {text: yaml_parses[text] for text in texts}
    # 12 head versions and 12 base versions (the base tip's are the same blobs): 24 distinct blobs.
    assert len(texts) == 24 and set(rubric_counts.values()) == {1}, sorted(rubric_counts.values())
    assert calibration_parses and set(calibration_parses.values()) == {1}, calibration_parses
    # One verdict blob at the merge base and tip, one at the head (read as the base's plus its lines).
    assert verdicts.parses + verdicts.extensions + verdicts.indexed - before <= 2
    assert len(default_memo().parses) >= 24 and set(default_memo().parses.values()) == {1}
