"""Regenerate the parts of README.md, docs/action.md and docs/science.md that the code decides, so
they cannot drift: the rendered comment examples (from the real renderer, on the bundled example:
an excerpt in the README, the whole comment in docs/action.md), the action's input table and list
(from action.yml), and every worked figure of the science page (each computed here by the
functions the tool uses); and the action's input defaults in the code (`action/config.py`'s
`DEFAULTS`, from action.yml: one source of truth).

    python scripts/render_docs.py          # rewrite them in place
    python scripts/render_docs.py --check  # exit 1 naming each stale block (the tests run this)

Each block sits between `<!-- generated:NAME -->` and `<!-- /generated:NAME -->` (in Python,
`# generated:NAME` and `# /generated:NAME` comment lines).
"""

from __future__ import annotations

import contextlib
import json
import re
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
BASE = "rubrics/cloud-security-review.yaml"
HEAD = "examples/drifting-revision.yaml"
# Fixed commit ids for the example footer (the real ones change with every commit).
BASE_SHA, HEAD_SHA = "3c0295f" + "0" * 33, "62b04dd" + "0" * 33


def example_report():
    from rubric_gate.rubric import load_rubric
    from rubric_gate.scoring import (
        VerdictLookup,
        load_calibration_for,
        load_verdicts_for,
        run_check,
    )

    with contextlib.chdir(ROOT):  # files named as a user in the repository names them
        base, head = load_rubric(BASE), load_rubric(HEAD)
        items = load_calibration_for(head, None, ROOT)
        store = load_verdicts_for([base, head], None, ROOT, replay=True)
        return run_check(base, head, VerdictLookup(items, store, head.rubric))


def _drop_details(markdown: str) -> str:
    """The example without its collapsed blocks (chart, gated rubric), which the text describes."""
    text = re.sub(r"<details>.*?</details>\n\n?", "", markdown, flags=re.S)
    return text.rstrip("\n") + "\n"


def readme_example() -> str:
    from rubric_gate.report import render_markdown

    return _drop_details(render_markdown(example_report(), heading_level=4))


def readme_excerpt() -> str:
    """The README's taste of the comment: the rubric's heading, its changes table and each
    rejected change's reason; docs/action.md shows the whole comment."""
    section = readme_example()
    return section[:section.index("**To pass:**")].rstrip("\n") + "\n"


def action_comment_example() -> str:
    from rubric_gate import __version__
    from rubric_gate.action.commits.changed import ChangedFile
    from rubric_gate.action.gating.outcome import RubricOutcome
    from rubric_gate.action.render import RunSummary, render_body

    outcome = RubricOutcome(ChangedFile(BASE, None, "modified"), report=example_report())
    body = render_body(RunSummary("fail", [outcome], HEAD_SHA, BASE_SHA,
                                  run_url="https://github.com/OWNER/REPO/actions/runs/1"))
    body = body.replace(f"rubric-gate {__version__} ·", "rubric-gate VERSION ·")
    fence = "`" * (max((len(r) for r in re.findall(r"`{3,}", body)), default=3) + 1)
    return f"{fence}markdown\n{body.rstrip()}\n{fence}\n"


def _inputs() -> dict[str, dict]:
    return yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))["inputs"]


def inputs_table() -> str:
    rows = ["| Input | Default | Meaning |", "|---|---|---|"]
    for name, spec in _inputs().items():
        default = str(spec.get("default", ""))
        shown = f"`{default}`" if default else "empty"
        meaning = " ".join(str(spec.get("description", "")).split()).replace("|", "\\|")
        rows.append(f"| `{name}` | {shown} | {meaning} |")
    return "\n".join(rows) + "\n"


def action_defaults() -> str:
    """Each input's `default:`; an expression (`${{ github.token }}`) is empty, for the code's own fallback."""
    rows = []
    for name, spec in _inputs().items():
        default = str(spec.get("default", ""))
        rows.append(f"    {json.dumps(name)}: {json.dumps('' if '${{' in default else default)},")
    return "DEFAULTS: dict[str, str] = {\n" + "\n".join(rows) + "\n}\n"


def inputs_list() -> str:
    names = ", ".join(f"`{name}`" for name in _inputs())
    return f"- **Inputs** (all optional; defaults and meanings in [docs/action.md](docs/action.md#inputs)): {names}.\n"


# -- docs/science.md: every worked figure, computed by the tool's own functions ------------------


def _items(labels: list[tuple[str, str]], splits: dict[str, str] | None = None, flaws: dict[str, str] | None = None):
    from rubric_gate.calibration import CalibrationItem, CalibrationSet

    return CalibrationSet([CalibrationItem(id=i, input=i, output=f"output {i}", label=label,
                                           split=(splits or {}).get(i, "calibration"),
                                           flaw=(flaws or {}).get(i)) for i, label in labels], "calibration set")


def _doc(checks: str, version: int = 1, text: str = "Check {} holds."):
    from rubric_gate.rubric import Check, Rubric, RubricDocument
    from rubric_gate.sources import SourceText

    rubric = Rubric(id="demo", version=version, task="Summarize the incident.", calibration="c", verdicts="v",
                    checks=[Check(id=c, text=text.format(c), origin="label" if c == "A" else "hand") for c in checks])
    return RubricDocument(rubric, SourceText("rubrics/demo.yaml", "", None))


def _store(answers: dict[str, str], checks: str, text: str = "Check {} holds."):
    """Item -> the checks answering no (every other check of `checks` answers yes)."""
    from rubric_gate.verdicts import Verdict, VerdictStore

    return VerdictStore([Verdict(item=i, check_text=text.format(c), answer="no" if c in no else "yes")
                         for i, no in answers.items() for c in checks])


def _pts(value: float) -> str:
    return f"{100 * value:+.1f}"


def paired_example() -> str:
    """The worked paired comparison: 8 correct and 2 flawed items; the base's check fails only the
    flawed ones, the head adds a check failing 6 correct items and both flawed ones."""
    from rubric_gate.comparison import comparison_lines
    from rubric_gate.scoring import VerdictLookup, run_check

    correct, flawed, failing = 8, 2, 6
    labels = [(f"c{n}", "pass") for n in range(1, correct + 1)] + [(f"f{n}", "fail") for n in range(1, flawed + 1)]
    items = _items(labels)
    answers = {i: ("xy" if label == "fail" else "y" if int(i[1:]) <= failing else "") for i, label in labels}
    base, head = _doc("x"), _doc("xy")
    report = run_check(base, head, VerdictLookup(items, _store(answers, "xy"), head.rubric))
    line = comparison_lines(report.comparisons)[0]
    c = next(c for c in report.comparisons if c.target == "head" and c.rate == "correct_passed")
    assert c.ci95 is not None and c.p_value is not None and c.delta is not None
    return (f"Take {correct} correct and {flawed} flawed items, a base whose one check fails only the flawed "
            f"ones, and a head that adds a check failing {failing} correct items and both flawed ones. The "
            f"comment's line\n\n```text\n{line}\n```\n\nreads: the edit fails {c.lost} correct outputs the "
            f"base passed and passes {c.gained} it failed ({c.from_count}/{c.total} → {c.to_count}/{c.total}, "
            f"{_pts(c.delta)} points); only those {c.lost + c.gained} discordant items carry evidence, and "
            f"p = {c.p_value:.2g} says a drop that large on {c.total} items is unlikely to be chance; the paired "
            f"interval puts the true change between {_pts(c.ci95[0])} and {_pts(c.ci95[1])} points. The gated "
            "rubric rejected the addition (its blame), so it passes what the base passed.\n")


def paraphrase_example() -> str:
    """Pure noise against a rare "no": raw agreement looks high, kappa and phi see nothing."""
    import numpy as np

    from rubric_gate.reliability import paraphrase_agreement, paraphrase_kappa, paraphrase_phi

    n, share, rewordings, seed = 400, 0.05, 3, 20261202
    rng = np.random.default_rng(seed)
    original = rng.random(n) < share
    noise = rng.random((rewordings, n)) < share
    figures = [(name, f(original, noise)) for name, f in (("raw agreement", paraphrase_agreement),
                                                          ("kappa", paraphrase_kappa), ("phi", paraphrase_phi))]
    faithful = [f(original, np.stack([original] * rewordings))
                for f in (paraphrase_agreement, paraphrase_kappa, paraphrase_phi)]
    shown = ", ".join(f"{name} {value:.2f}" for name, value in figures)
    return (f"On {n} items where the original answers no on {int(original.sum())} and {rewordings} rewordings "
            f"answer no at random on about {100 * share:.0f}% of items (noise, unrelated to the original; seed "
            f"{seed}): {shown}. Rewordings that answer exactly as the original score "
            f"{', '.join(f'{v:.2f}' for v in faithful)}.\n")


NA_PATTERNS = (("n/a",), ("no", "n/a"), ("yes", "n/a"), ("no", "yes"), ("n/a", "n/a"), ("no", "yes", "n/a"),
               ("no", "n/a", "n/a"), ("no", "no", "yes"))


def na_table() -> str:
    """Answers of several samples (or judges) for one pair, and what the one reading makes of them."""
    import numpy as np

    from rubric_gate.reliability import majority

    rows = ["| Answers | Votes cast (no / yes) | The gate reads | Tie | Split (flip) |", "|---|--:|---|---|---|"]
    for answers in NA_PATTERNS:
        votes = np.array([[a == "no"] for a in answers])
        abstained = np.array([[a == "n/a"] for a in answers])
        vote = majority(votes, abstained)
        cast = [a for a in answers if a != "n/a"]
        reads = "n/a (never a fail)" if vote.abstained[0] else "no (fails)" if vote.failed[0] else "yes"
        rows.append(f"| {', '.join(answers)} | {cast.count('no')} / {cast.count('yes')} | {reads} | "
                    f"{'yes' if vote.tie[0] else 'no'} | {'yes' if vote.split[0] else 'no'} |")
    return "\n".join(rows) + "\n"


def verdict_codes() -> str:
    from rubric_gate.verdicts.table_data import ANSWER_CODES

    return ("In the verdict table the answer is one small integer: "
            + ", ".join(f"{code} {word}" for word, code in ANSWER_CODES.items()) + ".\n")


PAPER_TABLE_1 = {"R1": ("fail", "A"), "R2": ("fail", "AB"), "R3": ("fail", "BCD"), "R4": ("pass", "D"), "R5": ("pass", "")}


def judge_change_example() -> str:
    """The paper's Table 1 under an old judge, and a new judge that no longer fails R1 on A (A's
    unique catch) and no longer fails R4 on D: rule J's section as the comment shows it."""
    from rubric_gate.rejudge import compare_judges
    from rubric_gate.report import render_judge_change_markdown
    from rubric_gate.scoring import VerdictLookup

    items = _items([(i, label) for i, (label, _) in PAPER_TABLE_1.items()])
    doc = _doc("ABCD")
    old = {i: no for i, (_, no) in PAPER_TABLE_1.items()}
    new = {**old, "R1": "", "R4": ""}
    change = compare_judges(doc, doc, VerdictLookup(items, _store(old, "ABCD"), doc.rubric),
                            VerdictLookup(items, _store(new, "ABCD"), doc.rubric),
                            old_judges=("anthropic:claude-sonnet-4-6",), new_judges=("openai:gpt-4.1",))
    return ("The paper's Table 1 (checks A to D on R1 to R5) under an old judge, and a new judge that no longer "
            "answers no to A on R1 nor to D on R4 (the section `check --judge openai:gpt-4.1 --against-judge "
            "anthropic:claude-sonnet-4-6 --format markdown` prints):\n\n" + render_judge_change_markdown(change))


CHAIN_ITEMS = {
    "R1": ("fail", None, "calibration", "A"), "R2": ("fail", None, "calibration", "AB"),
    "R3": ("fail", "unplanned", "calibration", "BCD"), "R4": ("pass", None, "calibration", "DE"),
    "R5": ("pass", None, "calibration", ""), "V1": ("fail", "unplanned", "evaluation", "C"),
    "V2": ("pass", None, "evaluation", "B"), "V3": ("fail", None, "evaluation", "A"),
}
CHAIN = (("ABCD", "start"), ("BCDE", "delete A, add E"), ("BCE", "delete D"), ("CE", "delete B"))


def chain_example() -> str:
    """`history --chain gated` on a 3-round chain, next to the committed revisions (the test
    tests/history/test_chain.py checks the same chain by hand)."""
    from rubric_gate.gate import GateOptions
    from rubric_gate.history import Revision, replay_history
    from rubric_gate.history.render import paper_cell

    items = _items([(i, v[0]) for i, v in CHAIN_ITEMS.items()], splits={i: v[2] for i, v in CHAIN_ITEMS.items()},
                   flaws={i: v[1] for i, v in CHAIN_ITEMS.items() if v[1]})
    store = _store({i: v[3] for i, v in CHAIN_ITEMS.items()}, "ABCDE")
    revisions = [(Revision(f"round{n}", "", subject, "rubrics/demo.yaml"), _doc(checks, n + 1).rubric, None)
                 for n, (checks, subject) in enumerate(CHAIN)]
    history = replay_history("rubrics/demo.yaml", revisions, items, store, GateOptions(), "S+P", "gated")
    committed = replay_history("rubrics/demo.yaml", revisions, items, store, GateOptions(), "S+P")
    rows = ["| Round | Edits committed | Gate decides (on what it kept) | Kept | Committed, calibration | "
            "Gated, calibration | Committed, evaluation | Gated, evaluation |", "|--:|---|---|---|--:|--:|--:|--:|"]
    for n, report in enumerate(history.revisions):
        assert report.gated is not None
        decided = "; ".join(f"{c['change']} {c['check']}: {c['decision']}" for c in report.changes) or "(start)"
        rows.append(f"| {n} | {report.revision.subject} | {decided} | {''.join(c.id for c in report.gated.checks)} | "
                    + " | ".join(paper_cell(rates.get(split)) for split in ("calibration", "evaluation")
                                 for rates in (report.rates, report.gated_rates)) + " |")
    parted = []
    for n, (gated, plain) in enumerate(zip(history.revisions, committed.revisions, strict=True)):
        against = {c["check"]: c["decision"] for c in plain.changes}
        parted += [(n, c["check"], c["change"], c["decision"], against[c["check"]]) for c in gated.changes
                   if c["check"] in against and against[c["check"]] != c.get("decision")]
    notes = [f"In round {n} the chains part: the committed chain (gating round {n} against the committed round "
             f"{n - 1}) has {change} {check} {plain}, the gated chain (on what the gate kept) {gated}."
             for n, check, change, gated, plain in parted]
    return "\n".join(rows) + "\n\n" + " ".join(notes) + ("\n" if notes else "")


def rule_j_defaults() -> str:
    from rubric_gate.gate import JUDGE_CHANGE_ALPHA

    return (f"a rate lowered with an exact McNemar p below `--judge-change-alpha` (default {JUDGE_CHANGE_ALPHA:g}) "
            "rejects the change.\n")


def drift_defaults() -> str:
    from rubric_gate.drift import DRIFT_ALPHA, MAX_FLIP_RATE

    return (f"`drift` exits 1 when the estimated share of stored pairs answering otherwise now is above "
            f"`--max-flip-rate` (default {MAX_FLIP_RATE:g}, i.e. {100 * MAX_FLIP_RATE:g}%), or when the flips lean one "
            f"way with an exact McNemar p below `--alpha` (default {DRIFT_ALPHA:g}): the judge became stricter or "
            "more lenient.\n")


BLOCKS = {
    "README.md": {"action-inputs": inputs_list, "comment-excerpt": readme_excerpt},
    "docs/action.md": {"action-inputs": inputs_table, "comment-example": action_comment_example},
    "docs/science.md": {"paired-example": paired_example, "paraphrase-noise": paraphrase_example,
                        "na-reading": na_table, "verdict-codes": verdict_codes, "rule-j": rule_j_defaults,
                        "judge-change-example": judge_change_example, "drift-defaults": drift_defaults,
                        "chain-example": chain_example},
    "src/rubric_gate/action/config.py": {"action-defaults": action_defaults},
}


def _replace(text: str, name: str, content: str, path: str) -> str:
    if path.endswith(".py"):
        pattern = re.compile(rf"(# generated:{name}\b[^\n]*\n)(.*?)(# /generated:{name}\b)", re.S)
    else:
        pattern = re.compile(rf"(<!-- generated:{name} -->\n)(.*?)(<!-- /generated:{name} -->)", re.S)
    if not pattern.search(text):
        raise SystemExit(f"{path}: no generated:{name} block")
    return pattern.sub(lambda m: m.group(1) + content + m.group(3), text, count=1)


def render(path: str) -> str:
    text = (ROOT / path).read_text(encoding="utf-8")
    for name, make in BLOCKS[path].items():
        text = _replace(text, name, make(), path)
    return text


def main(argv: list[str]) -> int:
    stale = []
    for path in BLOCKS:
        new = render(path)
        if new != (ROOT / path).read_text(encoding="utf-8"):
            stale.append(path)
            if "--check" not in argv:
                (ROOT / path).write_text(new, encoding="utf-8")
    if stale and "--check" in argv:
        print(f"stale generated blocks in {', '.join(stale)}: run python scripts/render_docs.py", file=sys.stderr)
        return 1
    for path in stale:
        print(f"rewrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
