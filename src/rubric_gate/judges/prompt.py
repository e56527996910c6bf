"""Render judge prompts from the Jinja2 templates shipped in `prompts/`.

Templates run in a sandbox and all rubric/item text is passed as data (never compiled as
template code). Data is fenced: anything inside it that looks like one of our delimiter
tags is neutralised so an output cannot close its own block and speak as the prompt. "Looks
like" is judged on a normalised view, as a model would read it: spaces inside the tag
(`</ check>`, `< /check>`), invisible format characters (zero-width, soft hyphen, BOM, bidi
controls) and compatibility forms (fullwidth `</check>`, U+FF1C ...) do not hide a tag. Only the
tags themselves are rewritten; the rest of the text reaches the judge as written.
"""

from __future__ import annotations

import hashlib
import json
import re
import unicodedata
from functools import cache
from importlib import resources
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from jinja2 import Template
    from jinja2.sandbox import SandboxedEnvironment

Mode = Literal["per-check", "checklist"]
TEMPLATES: dict[str, str] = {"per-check": "per_check.j2", "checklist": "checklist.j2"}
_TAG = re.compile(r"<\s*(/?)\s*(task|input|output|checks|check)\b", re.IGNORECASE)
_OPENERS = ("<", "\ufe64", "\uff1c")  # every character NFKC folds to "<"


def as_text(value: Any) -> str:
    """Item inputs/outputs may be any JSON value: show strings as-is, the rest as JSON."""
    if isinstance(value, str):
        return value
    return json.dumps(value, indent=2, ensure_ascii=False, sort_keys=True)


def fence(value: Any) -> str:
    return fence_tags(value, _TAG)


def fence_tags(value: Any, tags: re.Pattern[str]) -> str:
    """`value` as text with every tag `tags` matches (groups: slash, name) neutralised, judged on
    the normalised view; audit, repair, teach and discover prompts pass their own tag set."""
    text = as_text(value)
    if not any(opener in text for opener in _OPENERS):
        return text
    if text.isascii():  # nothing to normalise
        return tags.sub(lambda m: f"&lt;{m.group(1)}{m.group(2)}", text)
    # The normalised view, each of its characters mapped back to the one of `text` it came from.
    view: list[str] = []
    origin: list[int] = []
    for index, char in enumerate(text):
        folded = "" if unicodedata.category(char) == "Cf" else unicodedata.normalize("NFKC", char)
        view.extend(folded)
        origin.extend([index] * len(folded))
    out: list[str] = []
    last = 0
    for match in tags.finditer("".join(view)):
        start, end = origin[match.start()], origin[match.end() - 1] + 1
        out += [text[last:start], f"&lt;{match.group(1)}{match.group(2).lower()}"]
        last = end
    out.append(text[last:])
    return "".join(out)


@cache
def template_source(mode: Mode) -> str:
    return resources.files("rubric_gate.judges").joinpath("prompts", TEMPLATES[mode]).read_text("utf-8")


def prompt_version(mode: Mode = "per-check") -> str:
    """Changes whenever the template text changes, so stored verdicts key on it."""
    digest = hashlib.sha256(template_source(mode).encode("utf-8")).hexdigest()[:12]
    prefix = "v1-" if mode == "per-check" else "v1-checklist-"
    return prefix + digest


@cache
def _environment() -> SandboxedEnvironment:
    from jinja2 import StrictUndefined  # only when a prompt is rendered: replay never needs it
    from jinja2.sandbox import SandboxedEnvironment

    env = SandboxedEnvironment(autoescape=False, undefined=StrictUndefined, keep_trailing_newline=True)
    env.filters["fence"] = fence
    return env


@cache
def compiled_template(mode: Mode) -> Template:
    """Each template is compiled once per process, not once per pair."""
    return _environment().from_string(template_source(mode))


def render_per_check(task: str, item_input: Any, item_output: Any, check: str) -> str:
    return compiled_template("per-check").render(task=task, input=item_input, output=item_output, check=check)


def render_checklist(task: str, item_input: Any, item_output: Any, checks: list[tuple[str, str]]) -> str:
    """`checks` is [(prompt-local id, check text)]."""
    return compiled_template("checklist").render(task=task, input=item_input, output=item_output, checks=checks)


def shared_prefix(prompt: str, mode: Mode) -> int:
    """How much of a rendered prompt the other checks of the same item share: everything before
    the check (per-check) or the checks (checklist), which the templates put last so providers
    can cache it. Data is fenced, so the template's own tag is the last (or only) one."""
    from rubric_gate.llm.protocols import shared_until

    return shared_until(prompt, "<check>" if mode == "per-check" else "<checks>")


PROMPT_VERSION = prompt_version("per-check")
CHECKLIST_PROMPT_VERSION = prompt_version("checklist")
