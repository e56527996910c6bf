"""The gate's second reading, with the untrusted catches withheld, reads the trusted store's
columns through the first reading (`WithheldLookup`) instead of copying them: on any stores it
answers on the flawed items exactly as the copy it replaced, `trusted.merged(withheld)` (the
trusted record, then the untrusted verdicts with every "no" turned "yes"), and on the correct
items as the first reading (a PR's own "no" on a correct item is blame, which it keeps).

"Any stores" as the action makes them: the PR's own lines may carry any item hash and task, the
record's unweighed answers carry neither. (An unweighed answer recorded under another task would
differ: last in the copy it makes the pair stale, missing, where the view reads the first reading.)"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from rubric_gate.calibration import CalibrationItem, CalibrationSet
from rubric_gate.rubric import Rubric
from rubric_gate.scoring import VerdictLookup
from rubric_gate.service.gate import WithheldLookup
from rubric_gate.trust import catches_withheld
from rubric_gate.verdicts import Verdict, VerdictStore, task_hash

TASK = "Summarize the incident."
ITEMS = tuple(CalibrationItem(id=f"i{n}", input="x", output=str(n), label="fail" if n % 2 else "pass")
              for n in range(4))
CALIBRATION = CalibrationSet(ITEMS, "c.jsonl")
TEXTS = ("a check", "b check", "c check")
RUBRIC = Rubric(id="r", version=1, task=TASK, calibration="c.jsonl", verdicts="v.jsonl",
                checks=[{"id": f"C{n}", "text": text} for n, text in enumerate(TEXTS)])

# (item, text, answer, item hash: none / the item's / stale, task: none / the rubric's / another, respaced)
lines = st.lists(st.tuples(st.integers(0, len(ITEMS) - 1), st.integers(0, len(TEXTS) - 1),
                           st.sampled_from(["yes", "no", "n/a"]), st.integers(0, 2), st.integers(0, 2), st.booleans()),
                 max_size=12)
# The record's unweighed answers as `trust.unweighed_record` builds them: no item hash, no task.
unweighed_lines = st.lists(st.tuples(st.integers(0, len(ITEMS) - 1), st.integers(0, len(TEXTS) - 1),
                                     st.sampled_from(["yes", "no", "n/a"]), st.just(0), st.just(0), st.booleans()),
                           max_size=6)


def _verdicts(rows: list[tuple[int, int, str, int, int, bool]]) -> list[Verdict]:
    return [Verdict(item=ITEMS[item].id, check_text=f"  {TEXTS[text]} " if respaced else TEXTS[text], answer=answer,
                    item_hash=(None, ITEMS[item].content_hash, "sha256:stale")[hashed],
                    task_hash=(None, task_hash(TASK), task_hash("Another task."))[task])
            for item, text, answer, hashed, task, respaced in rows]


@settings(max_examples=150, deadline=None)
@given(trusted_rows=lines, pr_rows=lines, unweighed_rows=unweighed_lines)
def test_the_withheld_reading_answers_as_the_merged_copy(trusted_rows: list, pr_rows: list, unweighed_rows: list) -> None:
    trusted, pr_own, unweighed = _verdicts(trusted_rows), _verdicts(pr_rows), _verdicts(unweighed_rows)
    record = VerdictStore(trusted)
    withheld = VerdictStore(catches_withheld([*pr_own, *unweighed]))
    reading = VerdictLookup(CALIBRATION, record.merged(VerdictStore(pr_own)), RUBRIC)  # the first reading
    view = WithheldLookup(CALIBRATION, record, RUBRIC, reading=reading,
                          withheld=VerdictLookup(CALIBRATION, withheld, RUBRIC))
    copy = VerdictLookup(CALIBRATION, record.merged(withheld), RUBRIC)
    flawed = CALIBRATION.flawed.tolist()
    for text in TEXTS:
        mine, theirs, first = view.column(text), copy.column(text), reading.column(text)
        assert mine.missing.tolist() == theirs.missing.tolist(), text
        expected = [t if bad else f for t, f, bad in zip(theirs.failed.tolist(), first.failed.tolist(), flawed, strict=True)]
        assert mine.failed.tolist() == expected, text
        if theirs.not_applicable is not None or first.not_applicable is not None:
            def na(column):
                return column.not_applicable.tolist() if column.not_applicable is not None else [False] * len(flawed)
            assert mine.not_applicable is not None
            assert mine.not_applicable.tolist() == [t if bad else f for t, f, bad in zip(na(theirs), na(first), flawed,
                                                                                         strict=True)], text
