"""JSON Schemas for rubric files, calibration items, verdicts and the action's report.json, generated from the pydantic models.

The committed copies (`schema/*.schema.json` in the repository, and the same files shipped in
this package) are regenerated with `python -m rubric_gate.schema`; a test fails when they drift.
"""

from rubric_gate.schema.generate import (
    ALL_SCHEMA_FILES,
    OUTPUT_SCHEMA_FILES,
    SCHEMA_FILES,
    calibration_item_schema,
    packaged_schema_path,
    render_schema,
    report_schema,
    rubric_schema,
    verdict_schema,
)

__all__ = [
    "ALL_SCHEMA_FILES",
    "OUTPUT_SCHEMA_FILES",
    "SCHEMA_FILES",
    "calibration_item_schema",
    "packaged_schema_path",
    "render_schema",
    "report_schema",
    "rubric_schema",
    "verdict_schema",
]
