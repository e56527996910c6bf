"""The shape of the action's report.json (`action.github.publish.write_report`), for its JSON Schema.

Only what a reviewer's tooling reads across runs is typed here: the run's decision, the findings
the comment lists, and every difference the run classified (kind, file, rule). Each rubric's
outcome (`rubrics`) is the gate report's own JSON, left open.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, WithJsonSchema

Rule = Literal["gate", "allowed", "override", "unclassified"]


class Finding(BaseModel):
    """A finding the comment lists: one of the classified diff (labels, recorded verdicts, rubric
    keys and ids), or one on the merge (with its kind and rule)."""

    model_config = ConfigDict(extra="forbid")
    file: Annotated[str, Field(description="The file it is in (a calibration set, verdict file or rubric), or "
                                           "'the merge' for a finding on the whole merge.")]
    used_by: Annotated[list[str], Field(description="The rubric files that read the file.")]
    message: Annotated[str, Field(description="What a reviewer reads.")]
    blocking: Annotated[bool, Field(description="It needs the override label (or a fix).")]
    kind: Annotated[str | None, Field(description="The difference's kind, e.g. merge.differs (merge findings "
                                                  "only; the diff's are in `differences`).")] = None
    rule: Annotated[Rule | None, Field(description="The kind's rule (merge findings only).")] = None


class ClassifiedDifference(BaseModel):
    """One difference the run classified between what the base branch vouches for and what the PR
    proposes (`trust.differences`), or between the merge that lands and the one reviewed."""

    model_config = ConfigDict(extra="forbid")
    kind: Annotated[str, Field(description="What changed, e.g. labels.added, answer.changed, rubric.moved, "
                                           "merge.bases.")]
    file: Annotated[str, Field(description="The file it is in, or 'the merge'.")]
    used_by: Annotated[list[str], Field(description="The rubric files that read the file.")]
    rule: Annotated[Rule, Field(description="gate: the gate decides it; allowed: recorded, no override; "
                                            "override: needs the override label; unclassified: no rule names "
                                            "the kind, so it needs the override.")]
    message: Annotated[str | None, Field(description="What a reviewer reads; null when the gate shows it "
                                                     "where it decides it.")]
    count: Annotated[int, Field(ge=1, description="How many facts of this kind changed in the file.")]
    needs_override: Annotated[bool, Field(description="The rule is override or unclassified.")]


class RunReport(BaseModel):
    """report.json, as `rubric-gate action` and `rubric-gate preview` write it."""

    model_config = ConfigDict(extra="forbid")
    decision: Annotated[Literal["pass", "fail", "pending"], Field(description="The run's decision.")]
    override: Annotated[str | None, Field(description="The override that turned the failures into a pass.")]
    pull_request: Annotated[int, Field(description="The pull request's number (0 for a preview or a merge "
                                                   "group naming none).")]
    base_sha: Annotated[str, Field(description="The merge base the PR was gated against.")]
    base_branch_sha: Annotated[str, Field(description="The base branch's tip the PR was gated onto.")]
    head_sha: Annotated[str, Field(description="The head commit gated.")]
    files_from: Annotated[Literal["git", "rest"], Field(description="Where the files were read: git, or the "
                                                                    "GitHub REST API (a shallow checkout).")]
    # The open object spelled out: pydantic before 2.11 leaves `additionalProperties` unsaid.
    rubrics: Annotated[list[Annotated[dict[str, Any], WithJsonSchema({"type": "object", "additionalProperties": True})]],
                       Field(description="Each changed rubric file's outcome.")]
    standard: Annotated[list[Finding], Field(description="The findings the comment lists.")]
    differences: Annotated[list[ClassifiedDifference], Field(
        description="Every difference the run classified, allowed and gated ones too, then the merge's.")] = []
