"""`rubric-gate discover`: write a rubric from preference pairs (PReMISE discovery)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import click

from rubric_gate.cli.common import print_json, repo_root, report_output, stdout_console
from rubric_gate.cli.errors import handle_errors
from rubric_gate.errors import EXIT_PASS, InputError

DEFAULT_TASK = "Respond to the user's prompt in the way the people who labelled the pairs preferred."


def _beside(path: Path, suffix: str) -> Path:
    stem = path.name[: -len(".jsonl")] if path.name.endswith(".jsonl") else path.name
    return path.with_name(f"{stem}.{suffix}.jsonl")


@click.command("discover")
@click.option("--pairs", "pairs_path", required=True, type=click.Path(dir_okay=False, path_type=Path),
              help='Preference pairs, JSONL: {"id", "prompt", "chosen", "rejected"} (optional "meta").')
@click.option("--judge", required=True, help="PROVIDER:MODEL: extracts, merges and scores the criteria.")
@click.option("--size", type=click.IntRange(min=1), default=10, show_default=True, help="Checks in the rubric (K).")
@click.option("--out", required=True, type=click.Path(dir_okay=False, path_type=Path),
              help="Rubric file to write, e.g. rubrics/NAME.yaml (NAME becomes the rubric id).")
@click.option("--task", default=DEFAULT_TASK, help="The rubric's task (what the graded output must do).")
@click.option("--calibration", help="The rubric's `calibration` path. Default: calibration/NAME.jsonl.")
@click.option("--verdicts", help="The rubric's `verdicts` path. Default: calibration/NAME.verdicts.jsonl.")
@click.option("--extractor", help="PROVIDER:MODEL for extraction and merging. Default: the judge.")
@click.option("--embeddings", "embedding_choice", type=click.Choice(["auto", "provider", "tfidf"]), default="auto",
              show_default=True, help="auto: the provider's embeddings API for an OpenAI judge (a server at "
                                      "OPENAI_BASE_URL only with --embedding-model), else local TF-IDF.")
@click.option("--embedding-model", help="Embeddings model for the provider API. Default: text-embedding-3-small.")
@click.option("--min-support", type=click.IntRange(min=1), default=2, show_default=True,
              help="Keep criteria backed by at least this many extracted candidates.")
@click.option("--pool", type=click.IntRange(min=1), help="Consolidate down to this many criteria. Default: 2 x size.")
@click.option("--diversity", type=click.FloatRange(0, 1), default=0.3, show_default=True,
              help="MMR weight of redundancy against support.")
@click.option("--preference-rank/--no-preference-rank", default=True, show_default=True,
              help="Rank by the share of pairs the chosen response wins (PReMISE 3.3), else by MMR order.")
@click.option("--answers", type=click.Path(dir_okay=False, path_type=Path),
              help="Store of model answers (JSONL). Default: beside the pairs, PAIRS.discover.jsonl.")
@click.option("--pair-verdicts", type=click.Path(dir_okay=False, path_type=Path),
              help="Verdicts on the pairs' responses (JSONL). Default: beside the pairs, PAIRS.verdicts.jsonl.")
@click.option("--force", is_flag=True, help="Overwrite --out if it exists.")
@click.option("--dry-run", is_flag=True, help="Say which calls would be made and their estimated cost; make none.")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.option("--max-calls", type=click.IntRange(min=0), help="Refuse to start a stage that needs more calls.")
@click.option("--concurrency", type=click.IntRange(min=1), default=8, show_default=True)
@click.option("--root", type=click.Path(file_okay=False, path_type=Path), help="Repository root for paths.")
@handle_errors
def discover_command(pairs_path: Path, judge: str, size: int, out: Path, task: str, calibration: str | None,
                     verdicts: str | None, extractor: str | None, embedding_choice: str,
                     embedding_model: str | None, min_support: int, pool: int | None, diversity: float,
                     preference_rank: bool, answers: Path | None, pair_verdicts: Path | None, force: bool,
                     dry_run: bool, fmt: str, max_calls: int | None, concurrency: int, root: Path | None) -> int:
    """Discover a rubric from preference pairs and write it to OUT (origin: generated).
    Exit 0 done, 2 on bad input or a judge failure."""
    from rubric_gate.audit import AuditStore
    from rubric_gate.cli.preference_fit import pair_verdicts_path
    from rubric_gate.discover import (
        DiscoverSettings,
        choose_embedder,
        discover_rubric,
        discovered_yaml,
        plan_discovery,
        render_discover_text,
    )
    from rubric_gate.llm.spec import parse_judge_spec
    from rubric_gate.pairs import load_pairs
    from rubric_gate.verdicts import VerdictStore

    root = root or repo_root()
    for spec in (judge, extractor):
        if spec is not None:
            parse_judge_spec(spec)
    target = out if out.is_absolute() else root / out
    if target.exists() and not force:
        raise InputError(str(out), "already exists; pass --force to overwrite it")
    name = out.name.removesuffix(".yaml").removesuffix(".yml")
    pairs = load_pairs(pairs_path)
    pairs_file = pairs_path if pairs_path.is_absolute() else Path.cwd() / pairs_path
    store = AuditStore.load(answers or _beside(pairs_file, "discover"))
    verdict_store = VerdictStore.load(pair_verdicts or pair_verdicts_path(pairs_file), missing_ok=True)
    embedder = choose_embedder(embedding_choice,
                               judge, store, embedding_model, concurrency=concurrency, max_calls=max_calls)
    if embedder.notice:  # up front, on stderr: a run that fails later still said it
        print(f"notice: {embedder.notice}", file=sys.stderr)
    settings = DiscoverSettings(size=size, pool=pool, min_support=min_support, diversity=diversity,
                                preference_rank=preference_rank, concurrency=concurrency, max_calls=max_calls)
    if dry_run:
        plan = plan_discovery(pairs, extractor or judge, store, settings)
        with report_output():
            if fmt == "json":
                print_json({"dry_run": True, "pairs": len(pairs), "embeddings": embedder.describe, "plan": plan,
                            "notes": [embedder.notice] if embedder.notice else []})
            else:
                for line in plan:
                    print(f"dry run: {line}")
        return EXIT_PASS
    calibration = calibration or f"calibration/{name}.jsonl"
    rubric, report = discover_rubric(
        pairs, judge=judge, name=name, task=task, calibration=calibration,
        verdicts_path=verdicts or f"calibration/{name}.verdicts.jsonl", answers=store, verdicts=verdict_store,
        embedder=embedder, extractor=extractor, settings=settings)
    text = discovered_yaml(rubric, report, pairs.display)
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(f".{target.name}.partial")
    partial.write_text(text, encoding="utf-8")
    os.replace(partial, target)
    report.out, report.yaml = str(out), text
    if not (root / calibration).exists():
        report.notes.append(f"{calibration} does not exist yet: label 30-50 outputs of the task there "
                            "before the first PR, so the gate can measure each check")
    for stats in report.usage:
        print(stats.summary, file=sys.stderr)
    with report_output():
        if fmt == "json":
            if embedder.notice:
                report.notes.insert(0, embedder.notice)
            print_json({**report.to_dict(), "yaml": text})
        else:
            render_discover_text(report, stdout_console())
    return EXIT_PASS
