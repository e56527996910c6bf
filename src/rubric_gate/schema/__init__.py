"""JSON Schemas for rubric files, calibration items and verdicts, generated from the pydantic models.

The committed copies (`schema/*.schema.json` in the repository, and the same files shipped in
this package) are regenerated with `python -m rubric_gate.schema`; a test fails when they drift.
"""

from rubric_gate.schema.generate import (
    SCHEMA_FILES,
    calibration_item_schema,
    packaged_schema_path,
    render_schema,
    rubric_schema,
    verdict_schema,
)

__all__ = [
    "SCHEMA_FILES",
    "calibration_item_schema",
    "packaged_schema_path",
    "render_schema",
    "rubric_schema",
    "verdict_schema",
]
