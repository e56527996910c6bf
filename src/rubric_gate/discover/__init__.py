"""Discovery of a rubric from preference pairs (PReMISE §3.1, §3.3): extract criteria per pair,
consolidate them (embed, cluster, merge), keep the backed ones, select by MMR and rank by the
share of pairs the chosen response wins."""

from rubric_gate.discover.embed import TFIDF, Embedder, choose_embedder
from rubric_gate.discover.model import DiscoveredCheck, DiscoverReport
from rubric_gate.discover.render import discovered_yaml, render_discover_text
from rubric_gate.discover.run import DiscoverSettings, discover_rubric, plan_discovery

__all__ = [
    "TFIDF",
    "DiscoverReport",
    "DiscoverSettings",
    "DiscoveredCheck",
    "Embedder",
    "choose_embedder",
    "discover_rubric",
    "discovered_yaml",
    "plan_discovery",
    "render_discover_text",
]
