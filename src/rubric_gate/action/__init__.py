"""The GitHub Action: gate a pull request's rubric edits, report in one sticky comment and a check run."""

from rubric_gate.action.config import DEFAULTS, ActionConfig, load_config
from rubric_gate.action.render import MARKER
from rubric_gate.action.run import run_action

__all__ = ["DEFAULTS", "MARKER", "ActionConfig", "load_config", "run_action"]
