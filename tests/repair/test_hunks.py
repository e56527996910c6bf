"""Head-side hunks of a PR file's patch, and which span one of them holds (pure)."""

from __future__ import annotations

from rubric_gate.repair.hunks import head_hunks, hunk_holding

PATCH = """@@ -7,6 +9,7 @@ checks:
   - id: a
+  - id: b
@@ -20 +22 @@
-x
+y
@@ -30,2 +33,0 @@
-gone
-gone
"""


def test_hunks_read_from_the_headers_with_an_omitted_count_as_one_and_pure_deletions_skipped() -> None:
    assert head_hunks(PATCH) == [(9, 15), (22, 22)]
    assert head_hunks(None) == [] and head_hunks("Binary files differ") == []


def test_a_span_fits_only_inside_one_hunk() -> None:
    hunks = head_hunks(PATCH)
    assert hunk_holding(hunks, 11, 15) == (9, 15)
    assert hunk_holding(hunks, 22, 22) == (22, 22)
    assert hunk_holding(hunks, 11, 24) is None  # the span: starts in one hunk, ends past it
    assert hunk_holding(hunks, 15, 22) is None  # both ends in the diff, but in two hunks
    assert hunk_holding(hunks, 16, 16) is None
