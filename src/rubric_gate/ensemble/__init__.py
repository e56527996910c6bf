"""Judge panels and repeated samples: majority columns for the gate, and how far each
decision can be trusted (flip rate, inter-judge alpha and kappa, by-judge decisions)."""

from rubric_gate.ensemble.panel import PanelLookup, Votes, run_panel_check

__all__ = ["PanelLookup", "Votes", "run_panel_check"]
