"""Markdown as GitHub renders it, for asserting the structure of the comment and reports.

cmark-gfm (GitHub's own CommonMark + GFM parser, through cmarkgfm) turns the Markdown into HTML
with the table, autolink, strikethrough and tag-filter extensions; the HTML is read back into a
small element tree. GitHub then post-processes text outside code (mentions, issue and commit
references, math, alerts): `live_spans` applies those patterns to the rendered text nodes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from html.parser import HTMLParser

import cmarkgfm
from cmarkgfm.cmark import Options

EXTENSIONS = ["table", "autolink", "strikethrough", "tagfilter"]
# Markup the renderer itself writes; anything else in the HTML came from user text.
OWN_TAGS = {"details", "summary", "sub"}
VOID = {"br", "hr", "img", "input", "meta", "link"}
DOLLAR = "\ue000"  # stands for a literal "$" in the source, to tell it from an entity "&#36;"

# What GitHub turns into a link, a mention or math in text outside code.
LIVE_TEXT = {
    "mention": re.compile(r"(?<![\w`])@[A-Za-z0-9][A-Za-z0-9-]*"),
    "issue reference": re.compile(r"(?<![\w&])(?:[\w.-]+/[\w.-]+)?#\d+\b"),
    "autolink reference": re.compile(r"\b[A-Za-z][A-Za-z0-9]*-\d+\b"),
    "commit reference": re.compile(r"(?<![0-9A-Za-z])[0-9a-fA-F]{7,40}(?![0-9A-Za-z])"),
    "math": re.compile(DOLLAR),
    "bidirectional control": re.compile("[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]"),
}


@dataclass
class Element:
    tag: str
    attrs: dict[str, str | None] = field(default_factory=dict)
    children: list[Element | str] = field(default_factory=list)

    @property
    def elements(self) -> list[Element]:
        return [c for c in self.children if isinstance(c, Element)]

    def text(self) -> str:
        return "".join(c if isinstance(c, str) else c.text() for c in self.children)

    def iter(self, tag: str | None = None):
        for child in self.elements:
            if tag is None or child.tag == tag:
                yield child
            yield from child.iter(tag)

    def find_all(self, tag: str) -> list[Element]:
        return list(self.iter(tag))


class _TreeBuilder(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = Element("root")
        self.stack = [self.root]

    def handle_starttag(self, tag, attrs):
        element = Element(tag, dict(attrs))
        self.stack[-1].children.append(element)
        if tag not in VOID:
            self.stack.append(element)

    def handle_startendtag(self, tag, attrs):
        self.stack[-1].children.append(Element(tag, dict(attrs)))

    def handle_endtag(self, tag):
        for depth in range(len(self.stack) - 1, 0, -1):
            if self.stack[depth].tag == tag:
                del self.stack[depth:]
                return

    def handle_data(self, data):
        self.stack[-1].children.append(data)

    def handle_comment(self, data):
        self.stack[-1].children.append(Element("!--", {"text": data}))


def to_html(markdown: str) -> str:
    """cmark-gfm's HTML; raw HTML is kept (unsafe) so that any that user text smuggles in shows."""
    return cmarkgfm.markdown_to_html_with_extensions(
        markdown.replace("$", DOLLAR), options=Options.CMARK_OPT_UNSAFE, extensions=EXTENSIONS)


def parse(markdown: str) -> Element:
    return parse_html(to_html(markdown))


def parse_html(html: str) -> Element:
    """The element tree of an HTML document (the HTML report), to compare it with the Markdown's."""
    builder = _TreeBuilder()
    builder.feed(html)
    builder.close()
    return builder.root


def _text_outside_code(element: Element) -> list[str]:
    out: list[str] = []
    for child in element.children:
        if isinstance(child, str):
            out.append(child)
        elif child.tag not in ("code", "pre", "!--"):
            out.extend(_text_outside_code(child))
    return out


def live_spans(root: Element, *, allowed_links: tuple[str, ...] = (), own: tuple[str, ...] = ()) -> list[tuple[str, str]]:
    """(kind, text) of everything GitHub would render live: links, images, raw HTML, mentions,
    references, math and bidi controls. `allowed_links` are hrefs, `own` texts (the commit ids
    of the run) that the renderer writes itself."""
    found: list[tuple[str, str]] = []
    for element in root.iter():
        if element.tag == "a" and (element.attrs.get("href") or "") not in allowed_links:
            found.append(("link", f"{element.attrs.get('href')} {element.text()!r}"))
        elif element.tag == "img":
            found.append(("image", str(element.attrs.get("src"))))
        elif element.tag not in KNOWN_TAGS:
            found.append(("html", element.tag))
    for text in _text_outside_code(root):
        for kind, pattern in LIVE_TEXT.items():
            found.extend((kind, m.group(0)) for m in pattern.finditer(text) if m.group(0) not in own)
    return found


# What cmark-gfm writes for Markdown syntax, plus the renderer's own tags.
KNOWN_TAGS = OWN_TAGS | {
    "p", "ul", "ol", "li", "blockquote", "h1", "h2", "h3", "h4", "h5", "h6", "table", "thead",
    "tbody", "tr", "th", "td", "code", "pre", "em", "strong", "del", "a", "img", "hr", "br", "!--",
}


def top_level(root: Element) -> list[Element]:
    return [e for e in root.elements if e.tag != "!--"]


def alerts(root: Element) -> list[tuple[str, str]]:
    """(kind, text) of each GitHub alert: a blockquote whose first line is `[!KIND]`. Only a
    top-level blockquote counts as one; nested ones are returned with kind prefixed by "nested:"."""
    found = []
    for element in root.iter("blockquote"):
        first = next(iter(element.elements), None)
        text = first.text() if first is not None else ""
        match = re.match(r"\[!(NOTE|TIP|IMPORTANT|WARNING|CAUTION)\]\n", text)
        if match:
            nested = element not in root.elements
            found.append((("nested:" if nested else "") + match.group(1), text[match.end():]))
    return found


def table_rows(table: Element) -> list[list[str]]:
    body = next(table.iter("tbody"), None)
    if body is None:
        return []
    return [[cell.text() for cell in row.elements] for row in body.iter("tr")]


def table_header(table: Element) -> list[str]:
    head = next(table.iter("thead"))
    return [cell.text() for cell in head.iter("th")]


def tables(root: Element) -> list[Element]:
    return root.find_all("table")


RULE_CODE = re.compile(r"\[[A-Z]\]|\b[SPRUA]\b(?![-.'])")


def assert_report_structure(markdown: str, report: dict, *, allowed_links: tuple[str, ...] = (),
                            own: tuple[str, ...] = ()) -> Element:
    """The checks every rendered gate report must pass, as GitHub renders it. `report` is the
    JSON form of the same report (`CheckReport.to_dict()`)."""
    root = parse(markdown)
    problems = live_spans(root, allowed_links=allowed_links, own=own)
    assert not problems, f"live from user text: {problems}"
    rejected = [c for c in report["changes"] if c["decision"] == "rejected"]
    if rejected:
        lead = next(p for p in root.iter("p") if re.fullmatch(r"\d+ of \d+ changes? rejected:", p.text()))
        lists = [e for e in root.iter("ul")]
        items = next(ul for ul in lists if _follows(root, lead, ul)).find_all("li")
        assert len(items) == len(rejected), [li.text() for li in items]
        for change, li in zip(rejected, items, strict=True):
            assert li.text().startswith(change["check"] + " ("), li.text()
            assert not RULE_CODE.search(li.text()[len(change["check"]):]), li.text()
            figures_match_row(li.text(), change)
    # Alerts: top-level blockquotes, each with a blank line before and after in the source.
    found = alerts(root)
    assert all(not kind.startswith("nested:") for kind, _ in found), found
    lines = markdown.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("> [!"):
            assert i == 0 or lines[i - 1] == "", f"no blank line before {line!r}"
            end = next((j for j in range(i, len(lines)) if not lines[j].startswith(">")), len(lines))
            assert end == len(lines) or lines[end] == "", f"no blank line after the alert at {line!r}"
    # The decision per change first: four columns, one row per change in the gate's order.
    changes_tables = [t for t in tables(root) if table_header(t) == ["Check", "Change", "Decision", "Why"]]
    if report["changes"]:
        (changes_table,) = changes_tables
        change_rows = table_rows(changes_table)
        assert [r[0] for r in change_rows] == [c["check"] for c in report["changes"]], change_rows
        assert [r[2].split(" ")[0] for r in change_rows] == [c["decision"] for c in report["changes"]], change_rows
    else:
        assert not changes_tables
    # Then the figures: one row per check, the head's checks, then deleted ones (a rename is one row).
    table = next(t for t in tables(root) if table_header(t)[0] == "Check" and "When decided" in table_header(t))
    rows = table_rows(table)
    head_ids = [c["id"] for c in report["head"]["checks"]]
    renamed_away = {c["renamed_from"] for c in report["changes"] if c.get("renamed_from")}
    deleted = [c["id"] for c in report["base"]["checks"] if c["id"] not in head_ids and c["id"] not in renamed_away]
    assert [r[0] for r in rows] == head_ids + deleted
    header = table_header(table)
    decided = header.index("When decided")
    for change in report["changes"]:
        if change.get("when_decided"):
            row = next(r for r in rows if r[0] == change["check"])
            d = change["when_decided"]
            assert row[decided] == f"{d['credit']:.2f} / {d['blame']:.2f} / {d['unique_catches']}", row
    return root


def _follows(root: Element, first: Element, second: Element) -> bool:
    blocks = top_level(root)
    return first in blocks and second in blocks and blocks.index(second) == blocks.index(first) + 1


def figures_match_row(reason: str, change: dict) -> None:
    """Every figure the reason cites is the one its "When decided" cell shows."""
    d = change.get("when_decided") or {}
    for blame in re.findall(r"blame (\d+\.\d+)", reason):
        assert float(blame) == round(d["blame"], 2), (reason, d)
    for unique in re.findall(r"it alone catches (\d+) flawed", reason):
        assert int(unique) == d["unique_catches"], (reason, d)
