"""`rubric-gate init`: the files a repository needs to start gating a rubric."""

from rubric_gate.scaffold.plan import (
    ScaffoldFile,
    drift_workflow_template,
    next_steps,
    scaffold_files,
    workflow_template,
    write_new_files,
)

__all__ = ["ScaffoldFile", "drift_workflow_template", "next_steps", "scaffold_files", "workflow_template", "write_new_files"]
