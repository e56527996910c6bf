"""Paraphrase stability (PReMISE): meaning-preserving rewordings of a check, stored and reused."""

from rubric_gate.paraphrase.generate import ensure_paraphrases
from rubric_gate.paraphrase.store import Paraphrase, ParaphraseStore, paraphrase_path

__all__ = ["Paraphrase", "ParaphraseStore", "ensure_paraphrases", "paraphrase_path"]
