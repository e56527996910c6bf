"""`--gates`: each combination of the paper's gates decides as its rules say."""

from __future__ import annotations

import pytest

from rubric_gate.gate import parse_gates
from tests.gate.test_gate import check, decisions, gate, rubric
from tests.support.project import Project

# Base: A (hand-written, holds R1 alone), B (label-derived, frozen, no unique catch), C, D.
# Head deletes A and B and adds E, which fails the correct item R4 that D already fails (blame
# 0.5, but no rate drops).
BASE = rubric(check("A"), check("B", origin="label"), check("C"), check("D"))
HEAD = rubric(check("C"), check("D"), check("E", "new: fails R4"))

EXPECTED = {
    # gate: (E added, B deleted, A deleted) accepted?
    "S": (False, True, False),  # E has blame; B has no unique catch; A holds R1
    "P": (True, False, True),  # only B is frozen
    "R": (True, True, False),  # only losing A drops a rate (R1, then R2, are no longer caught)
    "R+P": (True, False, False),
    "S+P": (False, False, False),
    "R+S+P": (False, False, False),
}


@pytest.mark.parametrize("spec", EXPECTED)
def test_each_gate_mode_decides_as_its_rules_say(spec: str) -> None:
    result = gate(HEAD, BASE, gates=parse_gates(spec))
    got = decisions(result)
    assert (got["E"][1], got["B"][1], got["A"][1]) == EXPECTED[spec]
    rules = {r for d in result.decisions for r in (v.rule for v in d.violations)}
    assert rules <= set(spec.split("+"))


def test_rates_rule_is_an_alias_of_adding_r() -> None:
    assert decisions(gate(HEAD, BASE, rates_rule=True)) == decisions(gate(HEAD, BASE, gates=parse_gates("R+S+P")))
    assert decisions(gate(HEAD, BASE, gates=parse_gates("P"), rates_rule=True)) == \
        decisions(gate(HEAD, BASE, gates=parse_gates("R+P")))


def test_no_gate_still_never_deletes_the_last_check() -> None:
    result = gate(rubric(check("E", "new: fails R4")), rubric(check("A")), gates=parse_gates("P"))
    assert decisions(result) == {"E": ("added", True), "A": ("deleted", True)}
    lone = gate(rubric(check("C")), rubric(check("A")), gates=parse_gates("P"))
    assert decisions(lone)["A"] == ("deleted", True)
    result = gate(rubric(check("E", "new: fails R4")), rubric(check("A")), gates=parse_gates("S"))
    assert decisions(result) == {"E": ("added", False), "A": ("deleted", False)}
    assert "would leave no check" in result.decisions[1].reason


@pytest.mark.parametrize(("spec", "letters"), [("S+P", {"S", "P"}), ("r+s+p", {"R", "S", "P"}), (" P ", {"P"})])
def test_parse_gates(spec: str, letters: set[str]) -> None:
    assert parse_gates(spec) == letters


@pytest.mark.integration
def test_a_bad_gate_is_a_usage_error(project: Project) -> None:
    for spec, message in (("S+X", "unknown gate 'X'"), ("S+U", "gate U needs --min-stability")):
        proc = project.run("check", "--base", "HEAD:rubrics/demo.yaml", "--head", "rubrics/demo.yaml",
                           "--gates", spec)
        assert proc.returncode == 2 and message in proc.stderr, proc.stderr
        assert "Traceback" not in proc.stderr
