"""`rubric-gate preview`: the action's gate on a local repository, with no GitHub and no network.

The branch is gated against its merge base with the base branch (and the base tip), exactly as
the action gates a pull request from it; what the action would post is printed and written.
"""

from rubric_gate.preview.local import Preview, run_preview
from rubric_gate.preview.workflow import WorkflowInputs, workflow_inputs

__all__ = ["Preview", "WorkflowInputs", "run_preview", "workflow_inputs"]
