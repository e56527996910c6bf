"""`rubric-gate history`: every git revision of a rubric, both rates, and what the gate would have decided."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from rubric_gate.cli.common import print_json, repo_root, report_output, stdout_console
from rubric_gate.cli.errors import handle_errors
from rubric_gate.errors import EXIT_PASS, InputError
from rubric_gate.gate import GateOptions, parse_gates
from rubric_gate.rubric import load_rubric
from rubric_gate.scoring import resolve_path
from rubric_gate.verdicts import VerdictStore

if TYPE_CHECKING:
    from rubric_gate.history import Revision
    from rubric_gate.rubric import Rubric


@click.command("history")
@click.argument("rubric_path", metavar="RUBRIC")
@click.option("--gates", "gates_spec", default="S+P", show_default=True, metavar="GATES",
              help="Gates to replay at each step, joined by '+': S, P, R (as in `check --gates`).")
@click.option("--calibration", help="Labeled set (JSONL). Default: the newest revision's `calibration` in the work tree.")
@click.option("--verdicts", help="Verdict store (JSONL). Default: every revision's `verdicts` file, merged.")
@click.option("--chain", type=click.Choice(["committed", "gated"]), default="committed", show_default=True,
              help="committed: gate each revision against the previous commit. gated: the paper's replay, each "
                   "revision's edits applied to what the gate kept from the round before, its rubric scored too.")
@click.option("--format", "fmt", type=click.Choice(["text", "json", "html"]), default="text", show_default=True)
@click.option("--root", type=click.Path(file_okay=False, path_type=Path), help="Repository root.")
@handle_errors
def history_command(rubric_path: str, gates_spec: str, calibration: str | None, verdicts: str | None,
                    fmt: str, root: Path | None, chain: str = "committed") -> int:
    """Score every committed revision of RUBRIC (following renames) and replay the gate step by step."""
    from rubric_gate.calibration import load_calibration
    from rubric_gate.history import replay_history, rubric_revisions
    from rubric_gate.history.render import render_history_html, render_history_text

    try:
        gates = parse_gates(gates_spec) - {"U", "A"}
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="'--gates'") from None
    root = root or repo_root()
    revisions = rubric_revisions(root, rubric_path)
    loaded: list[tuple[Revision, Rubric | None, str | None]] = []
    for revision in revisions:
        if revision.deleted:
            loaded.append((revision, None, "the file was deleted in this commit"))
            continue
        try:
            loaded.append((revision, load_rubric(f"{revision.commit}:{revision.path}", root).rubric, None))
        except InputError as exc:
            loaded.append((revision, None, exc.what))
    rubrics = [(rev, r) for rev, r, _ in loaded if r is not None]
    if not rubrics:
        raise InputError(rubric_path, "no revision of this rubric loads")
    newest = rubrics[-1][1]
    items = load_calibration(calibration) if calibration is not None else \
        load_calibration(newest.calibration, root)
    store: VerdictStore | None
    if verdicts is not None:
        store = VerdictStore.load(verdicts)
    else:
        store = None
        for rev, rubric in rubrics:  # older files first: a later line wins, as in one file
            try:
                part = VerdictStore.load(f"{rev.commit}:{rubric.verdicts}", root)
            except InputError:
                continue  # that revision's verdict file was not committed
            store = part if store is None else store.merged(part)
        current = VerdictStore.load(resolve_path(root, newest.verdicts), missing_ok=True)
        store = current if store is None else store.merged(current)
    spec = "+".join(g for g in ("R", "S", "P") if g in gates)
    history = replay_history(rubric_path, loaded, items, store, GateOptions(gates=frozenset(gates)), spec, chain)
    with report_output():
        if fmt == "json":
            print_json(history.to_dict())
        elif fmt == "html":
            sys.stdout.write(render_history_html(history))
        else:
            render_history_text(history, stdout_console())
    return EXIT_PASS
