"""Preference pairs: a prompt with a chosen and a rejected response (JSONL), the input of
`discover` and `audit --preference-fit`."""

from rubric_gate.pairs.load import PairSet, PreferencePair, load_pairs, parse_pairs

__all__ = ["PairSet", "PreferencePair", "load_pairs", "parse_pairs"]
