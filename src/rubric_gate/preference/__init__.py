"""Preference fit of a rubric on preference pairs (PReMISE §3.2, §4.3-4.4): rubric-conditioned
judge accuracy against the same judge without the rubric, applicability, effective
dimensionality, and a Bradley-Terry regression on per-check score differences."""

from rubric_gate.preference.fit import (
    BradleyTerry,
    bradley_terry,
    effective_dimensionality,
    mean_abs_correlation,
    weight_entropy,
)
from rubric_gate.preference.model import CheckFit, PreferenceFit
from rubric_gate.preference.render import render_preference_markdown, render_preference_text
from rubric_gate.preference.run import chosen_shown_first, preference_fit

__all__ = [
    "BradleyTerry",
    "CheckFit",
    "PreferenceFit",
    "bradley_terry",
    "chosen_shown_first",
    "effective_dimensionality",
    "mean_abs_correlation",
    "preference_fit",
    "render_preference_markdown",
    "render_preference_text",
    "weight_entropy",
]
