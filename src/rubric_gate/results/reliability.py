"""How far a check's verdicts and a change's decision can be trusted, when a panel measured it.

Each part is None when it was not measured (no samples, one judge, no paraphrases); a measured
figure can still be None (no items, or a statistic undefined on them).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class SampleStability:
    """Repeated samples of each judge (`--samples N`)."""

    flip_rate: float | None  # share of items on which some judge's samples disagree
    unstable_items: tuple[str, ...]


@dataclass(frozen=True)
class JudgeAgreement:
    """Several judges on each pair."""

    alpha: float | None  # Krippendorff's nominal alpha between the judges
    tied_items: tuple[str, ...]  # the judges split evenly (counted as "no")


@dataclass(frozen=True)
class ParaphraseStability:
    """The check reworded (`--paraphrases N`) and judged again."""

    agreement: float | None  # raw share of items answered alike (noise scores high when "no" is rare)
    kappa: float | None  # chance-corrected: what rule U and the reports read
    paraphrases: tuple[str, ...]
    phi: float | None = None  # PReMISE's paraphrase stability (Spearman rho; phi for yes/no answers)


@dataclass(frozen=True)
class CheckReliability:
    samples: SampleStability | None = None
    judges: JudgeAgreement | None = None
    paraphrase: ParaphraseStability | None = None

    def measured(self) -> dict[str, float | None]:
        """The figures a per-check table shows, by key, for the parts measured."""
        out: dict[str, float | None] = {}
        if self.judges is not None:
            out["alpha"] = self.judges.alpha
        if self.samples is not None:
            out["flip_rate"] = self.samples.flip_rate
        if self.paraphrase is not None:
            out["paraphrase_kappa"] = self.paraphrase.kappa
        return out

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.samples is not None:
            out["flip_rate"] = self.samples.flip_rate
            out["unstable_items"] = list(self.samples.unstable_items)
        if self.judges is not None:
            out["alpha"] = self.judges.alpha
            out["tied_items"] = list(self.judges.tied_items)
        if self.paraphrase is not None:
            out["paraphrase_agreement"] = self.paraphrase.agreement
            out["paraphrase_kappa"] = self.paraphrase.kappa
            out["paraphrase_phi"] = self.paraphrase.phi
            out["paraphrases"] = list(self.paraphrase.paraphrases)
        return out


@dataclass(frozen=True)
class ChangeReliability:
    """What a gate decision rested on, measured with samples and/or several judges."""

    unstable_items: tuple[str, ...] | None = None  # samples: decisive items whose samples disagree
    tied_items: tuple[str, ...] | None = None  # judges: decisive items the judges tied on
    by_judge: Mapping[str, bool] = field(default_factory=dict)  # judges: judge -> accepted, gating alone

    @property
    def unstable(self) -> bool:
        return bool(self.unstable_items)

    def dissenting_judges(self, accepted: bool) -> list[str]:
        """Judges that, alone, would decide otherwise than the panel did."""
        return [judge for judge, alone in self.by_judge.items() if alone != accepted]

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.unstable_items is not None:
            out["unstable"] = self.unstable
            out["unstable_items"] = list(self.unstable_items)
        if self.tied_items is not None:
            out["tied_items"] = list(self.tied_items)
        if self.by_judge:
            out["by_judge"] = {j: "accepted" if alone else "rejected" for j, alone in self.by_judge.items()}
        return out


@dataclass
class ReliabilityReport:
    """A whole check run measured with a panel: judges, samples, paraphrases, and how the
    decisions held up."""

    judges: tuple[str, ...]
    samples: int
    paraphrased: int = 0  # checks measured under paraphrase
    min_paraphrase: tuple[str, float] | None = None  # (check id, paraphrase kappa) of the least stable one
    judge_kappa: list[tuple[str, str, float | None]] = field(default_factory=list)
    changes: int = 0
    judges_agree: int | None = None  # changes on which every judge alone decides as the panel
    unstable_changes: list[str] = field(default_factory=list)
    tied_changes: list[str] = field(default_factory=list)
    max_flip: tuple[str, float] | None = None  # (check id, flip rate) of the least stable head check

    def to_dict(self) -> dict[str, Any]:
        return {
            "judges": list(self.judges),
            "samples": self.samples,
            "paraphrased_checks": self.paraphrased,
            "judge_kappa": [{"judges": [a, b], "kappa": None if k is None else round(k, 4)}
                            for a, b, k in self.judge_kappa],
            "judges_agree": None if self.judges_agree is None else {
                "changes": self.judges_agree, "of": self.changes,
                "share": None if not self.changes else round(self.judges_agree / self.changes, 4)},
            "unstable_changes": self.unstable_changes,
            "tied_changes": self.tied_changes,
        }

    def how_sure(self) -> list[str]:
        parts = []
        if len(self.judges) > 1:
            text = f"{len(self.judges)} judges, majority per pair"
            if self.changes:
                text += f": each alone decides as the panel on {self.judges_agree} of {self.changes} changes"
            kappas = [k for _, _, k in self.judge_kappa if k is not None]
            if kappas:
                text += f", kappa between judges {min(kappas):.2f}" + (
                    f" to {max(kappas):.2f}" if max(kappas) != min(kappas) else "")
            parts.append(text)
        if self.samples > 1:
            text = f"{self.samples} samples per pair"
            if self.max_flip is not None:
                text += f": flip rate up to {100 * self.max_flip[1]:.0f}% ({self.max_flip[0]})"
            parts.append(text)
        if self.min_paraphrase is not None:
            check, value = self.min_paraphrase
            parts.append(f"paraphrases of {self.paraphrased} changed check{'s' if self.paraphrased != 1 else ''}: "
                         f"kappa down to {value:.2f} ({check})")
        if self.unstable_changes:
            n = len(self.unstable_changes)
            parts.append(f"{n} decision{'s' if n != 1 else ''} rest{'s' if n == 1 else ''} on unstable verdicts")
        if self.tied_changes:
            n = len(self.tied_changes)
            parts.append(f"{n} decision{'s' if n != 1 else ''} rest{'s' if n == 1 else ''} on judges' ties (counted as no)")
        return parts
