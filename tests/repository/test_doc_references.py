"""What the README and docs/ point a user at exists: every relative link reaches a file (and its
anchor a heading, as GitHub slugs it), every page of docs/ is linked from the README, and every
`rubric-gate` command line in a shell block names a command and options the CLI has; a command
line without placeholders parses as written, with valid choices and every required option."""

from __future__ import annotations

import re
import shlex
from itertools import pairwise
from pathlib import Path

import click
import pytest
from markdown_it import MarkdownIt

from rubric_gate.cli.main import cli, main

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", ROOT / "CONTRIBUTING.md", *sorted((ROOT / "docs").glob("*.md"))]
SHELL = {"sh", "bash", "shell", "console", ""}
PLACEHOLDER = re.compile(r"[\[\]|<>]|\.\.\.|\b[A-Z][A-Z_]{2,}\b")  # [--opt], a|b, <sha>, ..., FILE
OPTION = re.compile(r"(?<![\w-])(--?[A-Za-z][\w-]*)")


def _name(path: Path) -> str:
    return str(path.relative_to(ROOT))


def _tokens(path: Path) -> list:
    return MarkdownIt("commonmark").parse(path.read_text(encoding="utf-8"))


def _slug(text: str) -> str:
    """GitHub's heading anchor: lower case, punctuation other than `-` and `_` dropped, spaces to `-`."""
    return re.sub(r"[^\w\- ]", "", text.strip().lower()).replace(" ", "-")


def _anchors(path: Path) -> set[str]:
    tokens, found, seen = _tokens(path), set(), {}
    for heading, inline in pairwise(tokens):
        if heading.type != "heading_open":
            continue
        text = "".join(c.content for c in inline.children or [] if c.type in ("text", "code_inline"))
        slug = _slug(text)
        found.add(f"{slug}-{seen[slug]}" if slug in seen else slug)
        seen[slug] = seen.get(slug, 0) + 1
    return found


def _links(path: Path) -> list[str]:
    found = []
    for token in _tokens(path):
        for child in token.children or []:
            if child.type == "link_open":
                found.append(str(child.attrGet("href")))
            elif child.type == "image":
                found.append(str(child.attrGet("src")))
    return [link for link in found if not re.match(r"[a-z]+:", link)]


@pytest.mark.parametrize("page", PAGES, ids=_name)
def test_every_relative_link_and_anchor_resolves(page: Path) -> None:
    broken = []
    for link in _links(page):
        target, _, anchor = link.partition("#")
        path = (page.parent / target).resolve() if target else page
        if not path.exists():
            broken.append(f"{link}: no such file")
        elif anchor and path.suffix == ".md" and anchor not in _anchors(path):
            broken.append(f"{link}: no heading with that anchor in {_name(path)}")
    assert not broken, f"{_name(page)}: " + "; ".join(broken)


def test_every_docs_page_is_linked_from_the_readme() -> None:
    linked = {(ROOT / link.partition("#")[0]).resolve() for link in _links(ROOT / "README.md")}
    assert [_name(p) for p in (ROOT / "docs").glob("*.md") if p.resolve() not in linked] == []


def _command_lines(path: Path) -> list[str]:
    """The `rubric-gate ...` lines of the page's shell blocks: continuations (a trailing `\\`, or
    an indented line right after a command, as a synopsis wraps) joined, comments and
    redirections dropped, environment assignments before the command skipped."""
    lines: list[str] = []
    for token in _tokens(path):
        if token.type != "fence" or token.info.strip() not in SHELL:
            continue
        current: str | None = None
        for raw in token.content.splitlines():
            continuing = current is not None and (current.endswith("\\") or raw[:1].isspace())
            text = re.split(r"\s+#\s", " " + raw.strip(), maxsplit=1)[0].strip()
            if continuing and current is not None:
                current = current.rstrip("\\").rstrip() + " " + text
            else:
                if current is not None:
                    lines.append(current)
                text = re.sub(r"^(?:[A-Z_]+=\S*\s+)+", "", text)
                current = text if text.startswith("rubric-gate ") else None
        if current is not None:
            lines.append(current)
    return [re.split(r"\s+(?:>|&&)\s", line.rstrip("\\").strip())[0] for line in lines]


COMMAND_LINES = [(page, line) for page in PAGES for line in _command_lines(page)]


def test_the_docs_show_command_lines() -> None:
    # The pages this checks carry the commands a user copies: an empty list would test nothing.
    pages = {_name(page) for page, _ in COMMAND_LINES}
    assert {"README.md", "docs/cli.md", "docs/judges.md"} <= pages, pages


def _given(value: object) -> bool:
    """A value the parser read from the line (click 8.3+ marks an absent one with a sentinel, 8.1 with None)."""
    return value is not None and type(value).__name__ != "Sentinel"


def _options(command: click.Command) -> set[str]:
    return {opt for param in command.params for opt in (*param.opts, *param.secondary_opts)
            if isinstance(param, click.Option)} | {"--help", "-h"}


@pytest.mark.parametrize(("page", "line"), COMMAND_LINES, ids=[f"{_name(p)}: {line[:60]}" for p, line in COMMAND_LINES])
def test_each_command_line_names_a_command_and_its_options(page: Path, line: str) -> None:
    words = line.split()[1:]
    ctx = click.Context(cli, info_name="rubric-gate")
    if not words or words[0].startswith("-"):
        unknown = set(OPTION.findall(line)) - _options(cli)
        assert not unknown, f"{_name(page)}: {line}: rubric-gate has no {sorted(unknown)}"
        return
    command = cli.get_command(ctx, words[0])
    assert command is not None, f"{_name(page)}: {line}: no command {words[0]!r}"
    unknown = set(OPTION.findall(" ".join(words[1:]))) - _options(command)
    assert not unknown, f"{_name(page)}: {line}: `{words[0]}` has no {sorted(unknown)}"
    if PLACEHOLDER.search(line):
        return  # a synopsis: option names only
    sub = click.Context(command, info_name=words[0], parent=ctx)
    values, leftover, _ = command.make_parser(sub).parse_args(shlex.split(line)[2:])
    assert not leftover, f"{_name(page)}: {line}: arguments `{words[0]}` does not take: {leftover}"
    for param in command.params:
        value = values.get(param.name)
        if param.required and not _given(value):
            hint = param.opts[0] if isinstance(param, click.Option) else param.human_readable_name
            pytest.fail(f"{_name(page)}: {line}: `{words[0]}` needs {hint}")
        if isinstance(param.type, click.Choice) and _given(value):
            for one in value if isinstance(value, (list, tuple)) else [value]:
                assert one in param.type.choices, f"{_name(page)}: {line}: {param.opts[0]} {one!r} is not one of {param.type.choices}"


def _help(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, *args: str) -> str:
    monkeypatch.setenv("COLUMNS", "80")
    code = main([*args, "--help"])
    out = capsys.readouterr().out
    assert code == 0, out
    return out


def test_every_commands_help_fits_80_columns_and_every_command_is_in_the_cli_reference(
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    top = _help(capsys, monkeypatch)
    names = re.findall(r"^  ([a-z][a-z-]*)  ", top.partition("Commands:")[2], re.M)
    assert len(names) >= 10, top
    reference = (ROOT / "docs/cli.md").read_text(encoding="utf-8")
    for name, out in [("rubric-gate", top), *((name, _help(capsys, monkeypatch, name)) for name in names)]:
        wide = [line for line in out.splitlines() if len(line) > 80]
        assert not wide, f"`{name} --help` at 80 columns: {wide}"
        assert name == "rubric-gate" or f"rubric-gate {name} " in reference, f"docs/cli.md does not show `{name}`"
