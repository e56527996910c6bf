"""Offline checks of rubric files: schema, model rules, calibration and verdict coverage.

Unlike loading (which stops at the first problem), linting collects every finding.
"""

from rubric_gate.lint.findings import ERROR, WARNING, Finding, exit_code
from rubric_gate.lint.rubric_file import lint_rubric_file, lint_rubric_files

__all__ = ["ERROR", "WARNING", "Finding", "exit_code", "lint_rubric_file", "lint_rubric_files"]
