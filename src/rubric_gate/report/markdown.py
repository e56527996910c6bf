"""Markdown report: the per-check table the PR comment and job summary show."""

from __future__ import annotations

import functools
import re
from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined

from rubric_gate.attribution import Rate
from rubric_gate.comparison import comparison_lines
from rubric_gate.report.charts import credit_blame_mermaid
from rubric_gate.report.table import (
    CHANGE_HEADERS,
    change_lines,
    figures_headers,
    origin_cell,
    share,
    table_rows,
    trust_note,
)
from rubric_gate.report.terminal import strip_controls
from rubric_gate.report.trust import agreement_text, how_sure
from rubric_gate.results import (
    ChangeRow,
    CheckReport,
    HeldChange,
    JudgeChange,
    RubricSummary,
    Withheld,
)

_ZERO_WIDTH_SPACE = "\u200b"


def _one_line(value: str) -> str:
    # Every use is one line (a table cell, a list item, a quote): a newline would let user text
    # start a heading or list of its own, e.g. a fake "PASS" inside a rubric id.
    return value.replace("\r\n", " ").replace("\r", " ").replace("\n", " ")


# GitHub links more than Markdown does, after parsing, in every text node outside code: "@name"
# (and e-mail addresses), "#12", "GH-12", "owner/repo#12", custom prefixes such as "JIRA-12",
# 7- to 40-digit hex commit ids, bare URLs and "www.". A zero-width space breaks each pattern
# but the commit id while the text reads the same; an escape would not (the escaped text is the
# same text node). A commit id is shown in <code> instead (see `_HEX_RUN`): split by an invisible
# character it would no longer be the id when copied.
_LINKED = re.compile(
    r"(?<=@)(?=[A-Za-z0-9_-])"  # @name, e-mail
    r"|(?<=#)(?=[0-9])"  # #12, owner/repo#12
    r"|(?<=[A-Za-z]-)(?=[0-9])"  # GH-12, JIRA-12
    r"|(?<=:/)(?=/)"  # https://
    r"|(?i:(?<=\bww)(?=w\.))"  # www.
)
# A run of 7 or more hex digits: a commit id (ours, such as `abc1234:rubrics/x.yaml`, or one in
# user text). GitHub's reference filters skip text inside <code>, <pre> and <a>, so the run is
# put in a <code> element, as typed: not linked, and copied as the id. The HTML element, not a
# backtick code span, because one of the lines `neutralize` fills is raw HTML (the gated
# rubric's <summary>), where a code span is not parsed and its backticks would show.
_HEX_RUN = re.compile(r"(?i)(?<![0-9a-z])[0-9a-f]{7,}(?![0-9a-z])")
# Markdown syntax in one line of prose: escaped with a backslash (shown as typed). The backslash
# itself too, so "\\[x](url)" cannot turn the next escape back into a live bracket.
_SYNTAX = re.compile(r"([\\*{}\[\]!~#|]|(?<![A-Za-z0-9])_|_(?![A-Za-z0-9]))")  # "a_b" cannot emphasise
_ENTITIES = {"&": "&amp;", "<": "&lt;", ">": "&gt;", "$": "&#36;"}  # HTML, and math ($x$, $$)


def _break_links(value: str) -> str:
    return _LINKED.sub(_ZERO_WIDTH_SPACE, value)


def _commit_ids_as_code(value: str) -> str:
    """Each hex run of escaped prose in <code>: hex digits need no escape there, and prose can
    hold no "<" of its own (it is an entity by then), so the element is the only markup."""
    return _HEX_RUN.sub(lambda m: f"<code>{m.group(0)}</code>", value)


def neutralize(text: Any, *, table: bool = True) -> str:
    """Make user text inert in GitHub Markdown prose: shown as typed, on one line, with no
    mention, reference, link, image, autolink, math, HTML, bidirectional reordering, or line
    and table break; a commit id in a <code> element, so that it copies as written. (`table` is
    kept for callers: the pipe is always escaped.)"""
    value = _one_line(strip_controls(str(text)))
    value = _break_links(value)
    value = _SYNTAX.sub(r"\\\1", value).replace("`", "'")  # no code span can open in prose
    value = "".join(_ENTITIES.get(ch, ch) for ch in value)
    # A line-start marker ("- ", "+ ", "> ", "1. ") matters only at the start of a blockquote
    # line; the callers never put user text there, but one escape costs nothing.
    value = re.sub(r"^(\s*)([-+=])", r"\1\\\2", value)
    return _commit_ids_as_code(re.sub(r"^(\s*\d+)([.)])", r"\1\\\2", value))


def code_span(text: Any, *, table: bool = True) -> str:
    """User text as an inline code span, shown exactly as written (nothing in it renders).

    Inside a code span entities and backslash escapes show literally, so nothing is escaped but
    the pipe in a table cell, which GitHub's table parser consumes before the span is read.
    The fence is one backtick longer than any run inside.
    """
    value = _one_line(strip_controls(str(text)))
    if table:
        value = value.replace("|", "\\|")
    longest = max((len(run) for run in re.findall(r"`+", value)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if value.startswith("`") or value.endswith("`") or not value.strip() else ""
    return f"{fence}{pad}{value}{pad}{fence}"


def code_fence(text: str) -> str:
    """A fence for a code block holding `text` exactly: longer than any backtick run in it."""
    longest = max((len(run) for run in re.findall(r"`{3,}", text)), default=2)
    return "`" * (longest + 1)


def percent(rate: Rate) -> str:
    if rate.value is None:
        return "n/a"
    ci = rate.ci95
    interval = f"; {100 * ci[0]:.0f}-{100 * ci[1]:.0f}%" if ci is not None else ""
    return f"{100 * rate.value:.1f}% ({rate.count}/{rate.total}{interval})"


def percent_cell(rate: Rate) -> str:
    """`percent` for a table cell: no-break spaces and a non-breaking hyphen (a visible one: the
    comment holds no invisible marks) keep "100.0% (3/3; 44-100%)" on one line, so a narrow
    comment wraps the labels and headers rather than splitting a figure from its interval."""
    return percent(rate).replace(" ", "\u00a0").replace("-", "\u2011")


def number(value: float) -> str:
    return f"{value:.2f}"


@functools.cache  # one per process: compiling the templates again for each rubric cost ~40 ms a report
def _environment() -> Environment:
    # Autoescape is off: Markdown is not HTML. All user text passes through `neutralize`.
    env = Environment(
        loader=PackageLoader("rubric_gate.report", "templates"),
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        autoescape=False,
    )
    env.filters["n"] = neutralize
    env.filters["code"] = code_span
    env.globals["code_fence"] = code_fence
    # A code block shows text as typed, bidirectional controls included: those are replaced (U+FFFD).
    env.filters["shown"] = strip_controls
    env.filters["pct"] = percent
    env.filters["pct_cell"] = percent_cell
    env.filters["num"] = number
    env.filters["agreement"] = agreement_text
    env.filters["share"] = share
    env.filters["trust"] = trust_note
    env.filters["origin"] = origin_cell
    return env


def _rate_rows(before: RubricSummary, after: RubricSummary, gated: RubricSummary) -> list[dict[str, Any]]:
    names = [("correct_passed", "Correct outputs passed"), ("flawed_caught", "Flawed outputs caught"),
             ("unplanned_caught", "Unplanned flaws caught")]
    rows = []
    for key, label in names:
        b, h, g = (getattr(s.rates, key) for s in (before, after, gated))
        if b.total == 0 and h.total == 0:
            continue
        rows.append({"label": label, "base": b, "head": h, "gated": g})
    return rows


def _ids(items: tuple[str, ...], limit: int = 5) -> str:
    shown = ", ".join(items[:limit])
    return shown + (f", +{len(items) - limit} more" if len(items) > limit else "")


def _count(n: int, what: str, more: str = "") -> str:
    noun = what if n == 1 else what + "s"
    return f"{'no' if n == 0 else n}{more} {noun}"


def trade_text(change: ChangeRow) -> str:
    """What accepting a rejected change would trade, both sides with the items: plain text."""
    t = change.trade
    if t is None:
        return ""
    if change.change == "added":  # an addition trades catches against false fails
        primary = [("catch", t.flawed_caught, "more flawed item"), ("fail", t.correct_failed, "more correct item")]
        other = [("pass", t.correct_passed, "more correct item"), ("miss", t.flawed_missed, "flawed item")]
    else:  # a deletion, rewording or aggregation trades false fails against catches
        primary = [("pass", t.correct_passed, "more correct item"), ("miss", t.flawed_missed, "flawed item")]
        other = [("fail", t.correct_failed, "more correct item"), ("catch", t.flawed_caught, "more flawed item")]
    parts = []
    for verb, items, noun in primary + [o for o in other if o[1]]:
        word, _, extra = noun.partition(" ") if noun.startswith("more") else ("", "", noun)
        counted = _count(len(items), extra if word else noun, more=(" " + word) if word else "")
        parts.append(f"{verb} {counted}" + (f" ({_ids(items)})" if items else ""))
    return "accepting it would " + ", ".join(parts[:-1]) + " and " + parts[-1]


def rejected_item(change: ChangeRow, held: HeldChange | None = None) -> str:
    """One list item's text for a rejected change: the check, what changed, why, and the trade.
    A held change says both views, each labelled: the gate's reason on trusted evidence, and
    what the PR's own records decide."""
    what = change.change + ((" " + neutralize(change.detail)) if change.detail else "")
    if held is not None:
        return (f"{code_span(change.check, table=False)} ({what}), held: on trusted evidence, {neutralize(held.on_trusted)}; "
                f"on this PR's own records it is accepted ({neutralize(held.on_records)})")
    text = f"{code_span(change.check, table=False)} ({what}): {neutralize(change.reason)}"
    trade = trade_text(change)
    if trade:
        text += f". If accepted: {neutralize(trade.removeprefix('accepting it would '))}"
    note = trust_note(change)
    if note:
        text += f" — ⚠ {neutralize(note)}"
    return text


def version_label(version: str) -> str:
    return f"version {version}"


def versions_text(report: CheckReport) -> str:
    base, head = neutralize(report.base.version), neutralize(report.head.version)
    return f"version {base} → {head}" if base != head else f"version {base} (unchanged)"


def gated_label(report: CheckReport) -> str:
    """What the gated rubric is. It is always the head's file (its version, task and paths) with
    only the accepted check changes, so its version is the head's even when every change was
    rejected: calling that "the base" would contradict the YAML printed under this label."""
    version = report.head.version
    if not report.changes:
        return f"unchanged, version {version}"
    if not any(c.accepted for c in report.changes):
        return f"version {version}, every change rejected"
    if all(c.accepted for c in report.changes):
        return f"head, version {version}"
    return f"version {version}, accepted changes only"


VOUCH = "A review approving the PR's head by someone with write access makes them count."


def withheld_text(withheld: Withheld, vouch: str = VOUCH) -> str:
    """What the gate held back and why, in one paragraph (Markdown, user text neutralised): which
    changes are held only because their evidence is the PR's own, which evidence, what the PR's
    records would decide, and what makes them count (`vouch`, the caller's words)."""
    held = len(withheld.held)
    checks = ", ".join(code_span(c, table=False) for c in withheld.checks[:10]) + \
        (f" and {len(withheld.checks) - 10} more" if len(withheld.checks) > 10 else "")
    verdict = "passes the gate" if withheld.records_decision == "pass" else "is still rejected"
    return (f"{held} change{'s' if held != 1 else ''} above {'are' if held != 1 else 'is'} rejected only because "
            f"the evidence for {'them' if held != 1 else 'it'} is this PR's own: {withheld.verdicts} recorded "
            f"verdict{'s' if withheld.verdicts != 1 else ''} in {code_span(withheld.file, table=False)} answering "
            f"{checks or 'no check of this rubric'}, which no gate or judge has weighed. The gate counts their "
            f"\"no\" on a correct item as blame, but not their {withheld.catches} "
            f"catch{'es' if withheld.catches != 1 else ''} of flawed items; every figure in this section is computed "
            f"on all the records. On these records, this edit {verdict}. {vouch}")


def render_markdown(report: CheckReport, *, heading_level: int = 2, show_override: bool = True,
                    vouch: str = VOUCH, approval_suffices: bool = True) -> str:
    """`show_override=False`: the override is said once above (the PR comment's top), not here again.
    `vouch`: what makes the PR's own records count, said where they are held (the action names the head).
    `approval_suffices=False`: the run also fails on what no approval covers (a relabel): "To pass"
    does not offer the approval as the way through."""
    template = _environment().get_template("report.md.j2")
    rows = table_rows(report)
    pairs = ", ".join(f"{code_span(a, table=False)} + {code_span(b, table=False)} ({n} catch{'es' if n != 1 else ''})"
                      for a, b, n in report.gated.joint_catches)
    return template.render(
        report=report,
        h="#" * heading_level,
        versions=versions_text(report),
        gated_label=gated_label(report),
        rows=rows,
        headers=figures_headers(report),
        change_headers=CHANGE_HEADERS,
        changes=change_lines(report),
        mermaid=credit_blame_mermaid([r.check for r in rows]),
        rates=_rate_rows(report.base, report.head, report.gated),
        rejected=[rejected_item(c, report.held(c)) for c in report.changes if not c.accepted],
        withheld=withheld_text(report.withheld, vouch) if report.withheld is not None else "",
        only_held=bool(report.withheld) and all(c.accepted or report.held(c) for c in report.changes)
        and not report.run_failures and approval_suffices,
        pairs=pairs,
        how_sure=how_sure(report),
        columns=len(rows[0].measured) if rows else 0,
        shaky=[(c, trust_note(c)) for c in report.changes if c.accepted and trust_note(c)],
        paraphrased=[(r, r.reliability.paraphrase) for r in report.head.checks
                     if r.reliability and r.reliability.paraphrase and r.reliability.paraphrase.paraphrases],
        comparisons=comparison_lines(report.comparisons),
        **_judge_change(report),
        show_override=show_override,
    ).rstrip("\n") + "\n"


def _judge_change(report: CheckReport) -> dict[str, Any]:
    """The judge change's section (`judge_change.md.j2`), when the judge changed."""
    return {"jc": None} if report.judge_change is None else _judge_change_context(report.judge_change)


def _judge_change_context(jc: JudgeChange) -> dict[str, Any]:
    from rubric_gate.report import judge_change as parts

    return {"jc": jc, "jc_headers": [*parts.CHECK_HEADERS, parts.catches_header(jc)], "jc_cells": parts.check_cells,
            "jc_reading": parts.READING, "jc_rates": parts.rate_rows(jc),
            "jc_comparisons": comparison_lines(jc.comparisons), "jc_decisions": parts.decisions_sentence(jc)}


def render_judge_change_markdown(change: JudgeChange) -> str:
    """The judge change's section on its own, as the comment shows it under the rates."""
    context = _judge_change_context(change)
    return _environment().get_template("judge_change.md.j2").render(**context).rstrip("\n") + "\n"


def render_attribution_markdown(summary: RubricSummary, *, heading_level: int = 2) -> str:
    template = _environment().get_template("attribution.md.j2")
    return template.render(s=summary, h="#" * heading_level)
