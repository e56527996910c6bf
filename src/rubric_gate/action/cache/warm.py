"""On a push to the base branch: judge what the verdict cache lacks, so the next PR judges only
what it changes (`actions/cache` saves the cache under the base branch's key)."""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Mapping
from typing import Any

from rubric_gate.action.cache.verdict_cache import VerdictCache, judging_store
from rubric_gate.action.commits.changed import unmatched_globs
from rubric_gate.action.commits.snapshot import Snapshot
from rubric_gate.action.commits.sources import GitReader
from rubric_gate.action.commits.workspace import check_output_dir
from rubric_gate.action.config import ActionConfig
from rubric_gate.action.gating.gate_file import calibration_split, verdicts_at
from rubric_gate.action.gating.judging import JudgeBackend, load_backend
from rubric_gate.action.github.outputs import append_summary, command, write_outputs
from rubric_gate.calibration import CalibrationSet
from rubric_gate.errors import EXIT_BAD_INPUT, EXIT_PASS, InputError, RubricGateError
from rubric_gate.report.markdown import code_span, neutralize
from rubric_gate.rubric import RubricDocument
from rubric_gate.service import CallBudget
from rubric_gate.verdicts import VerdictStore


def _head(config: ActionConfig, env: Mapping[str, str]) -> str:
    sha = env.get("GITHUB_SHA", "").strip()
    if sha:
        return sha
    proc = subprocess.run(["git", "rev-parse", "HEAD"], cwd=config.workspace, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise InputError("GITHUB_SHA", "not set, and the workspace is not a git checkout")
    return proc.stdout.strip()


def warm_cache(config: ActionConfig, env: Mapping[str, str]) -> int:
    started = time.monotonic()
    check_output_dir(config.output_dir, config.workspace, config.cache_dir)
    sha = _head(config, env)
    reader = GitReader(config.workspace)
    snapshot = Snapshot(reader, sha, "push")  # each file read once, each blob parsed once
    files = reader.list_files(sha)
    missing = unmatched_globs(files, config.rubric_globs)
    if missing:
        raise InputError("input rubrics", f"{', '.join(repr(g) for g in missing)} matches no file in the repository")
    cache = VerdictCache(config.cache_dir)
    for warning in cache.warnings:
        command("warning", warning)
    lines: list[str] = []
    errors = 0
    budget = CallBudget(config.max_judge_calls)
    backends: dict[str, tuple[JudgeBackend | None, str | None]] = {}
    for path in snapshot.rubric_paths(config.rubric_globs):  # promptfoo configs the settings name too
        shown = code_span(path, table=False)  # file names and error text are data in the job summary
        # The judges a PR run uses: the `judge` input (all of it: a panel), else the rubric's key.
        specs = config.judges or tuple(j for j in [snapshot.rubric_keys(path).get("judge")] if j)
        if not specs:
            lines.append(f"- {shown}: no judge configured (set the `judge` input); nothing judged")
            continue
        for spec in specs:
            if spec not in backends:
                backends[spec] = load_backend(spec)
        unavailable = [why for backend, why in (backends[spec] for spec in specs) if backend is None]
        first_backend = backends[specs[0]][0]
        if unavailable or first_backend is None:
            lines.append(f"- {shown}: {neutralize(str(unavailable[0]), table=False)}")
            continue
        try:
            doc = snapshot.rubric(path)
            if doc is None:
                raise InputError(snapshot.display(path), "rubric not found at this commit")
            calibration = calibration_split(snapshot, doc.rubric.calibration)
            with judging_store(cache, verdicts_at(snapshot, doc.rubric.verdicts)) as store:
                stats = _judge(config, specs, first_backend, doc, calibration, store, budget)
        except RubricGateError as exc:
            errors += 1
            command("error", f"{path}: {exc.message}")
            lines.append(f"- {shown}: {neutralize(exc.message, table=False)}")
            continue
        lines.append(f"- {shown}: {neutralize(stats.get('summary', stats), table=False)}")
    message = (f"rubric-gate: verdict cache at {os.path.relpath(cache.path, config.workspace)} "
               f"({time.monotonic() - started:.1f}s)")
    print(message, flush=True)
    append_summary(config.summary_file, "\n".join(["## rubric-gate: verdict cache", "", *lines]))
    # A push is not gated: `skipped`, never a gate result a downstream step could read as one.
    write_outputs(config.output_file, {"decision": "skipped", "report": "", "comment": ""})
    return EXIT_BAD_INPUT if errors else EXIT_PASS


def _judge(config: ActionConfig, specs: tuple[str, ...], backend: JudgeBackend, doc: RubricDocument,
           calibration: CalibrationSet, store: VerdictStore, budget: CallBudget) -> dict[str, Any]:
    """Judge as a PR run will look verdicts up: every judge of the panel, every sample."""
    if len(specs) > 1 or config.request.samples > 1:
        from rubric_gate.ensemble.measure import judge_panel
        from rubric_gate.service import combined_stats

        measured = judge_panel(doc.rubric, doc.rubric, calibration, store, list(specs), samples=config.request.samples,
                               concurrency=config.request.concurrency, max_calls=budget.left())
        stats = combined_stats(measured.runs)
    else:
        stats = backend.judge_missing([doc], calibration, store, concurrency=config.request.concurrency,
                                      max_calls=budget.left())
    budget.spend(stats)
    return stats
