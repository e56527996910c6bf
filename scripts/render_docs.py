"""Regenerate the parts of README.md and docs/action.md that the code decides, so they cannot
drift: the rendered comment examples (from the real renderer, on the bundled example) and the
action's input table and list (from action.yml); and the action's input defaults in the code
(`action/config.py`'s `DEFAULTS`, from action.yml: one source of truth).

    python scripts/render_docs.py          # rewrite them in place
    python scripts/render_docs.py --check  # exit 1 naming each stale block (the tests run this)

Each block sits between `<!-- generated:NAME -->` and `<!-- /generated:NAME -->` (in Python,
`# generated:NAME` and `# /generated:NAME` comment lines).
"""

from __future__ import annotations

import contextlib
import json
import re
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
BASE = "rubrics/cloud-security-review.yaml"
HEAD = "examples/drifting-revision.yaml"
# Fixed commit ids for the example footer (the real ones change with every commit).
BASE_SHA, HEAD_SHA = "3c0295f" + "0" * 33, "62b04dd" + "0" * 33


def example_report():
    from rubric_gate.rubric import load_rubric
    from rubric_gate.scoring import (
        VerdictLookup,
        load_calibration_for,
        load_verdicts_for,
        run_check,
    )

    with contextlib.chdir(ROOT):  # files named as a user in the repository names them
        base, head = load_rubric(BASE), load_rubric(HEAD)
        items = load_calibration_for(head, None, ROOT)
        store = load_verdicts_for([base, head], None, ROOT, replay=True)
        return run_check(base, head, VerdictLookup(items, store, head.rubric))


def _drop_details(markdown: str) -> str:
    """The example without its collapsed blocks (chart, gated rubric), which the text describes."""
    text = re.sub(r"<details>.*?</details>\n\n?", "", markdown, flags=re.S)
    return text.rstrip("\n") + "\n"


def readme_example() -> str:
    from rubric_gate.report import render_markdown

    return _drop_details(render_markdown(example_report(), heading_level=4))


def action_comment_example() -> str:
    from rubric_gate import __version__
    from rubric_gate.action.commits.changed import ChangedFile
    from rubric_gate.action.gating.gate_file import RubricOutcome
    from rubric_gate.action.render import RunSummary, render_body

    outcome = RubricOutcome(ChangedFile(BASE, None, "modified"), report=example_report())
    body = render_body(RunSummary("fail", [outcome], HEAD_SHA, BASE_SHA,
                                  run_url="https://github.com/OWNER/REPO/actions/runs/1"))
    body = body.replace(f"rubric-gate {__version__} ·", "rubric-gate VERSION ·")
    fence = "`" * (max((len(r) for r in re.findall(r"`{3,}", body)), default=3) + 1)
    return f"{fence}markdown\n{body.rstrip()}\n{fence}\n"


def _inputs() -> dict[str, dict]:
    return yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))["inputs"]


def inputs_table() -> str:
    rows = ["| Input | Default | Meaning |", "|---|---|---|"]
    for name, spec in _inputs().items():
        default = str(spec.get("default", ""))
        shown = f"`{default}`" if default else "empty"
        meaning = " ".join(str(spec.get("description", "")).split()).replace("|", "\\|")
        rows.append(f"| `{name}` | {shown} | {meaning} |")
    return "\n".join(rows) + "\n"


def action_defaults() -> str:
    """Each input's `default:`; an expression (`${{ github.token }}`) is empty, for the code's own fallback."""
    rows = []
    for name, spec in _inputs().items():
        default = str(spec.get("default", ""))
        rows.append(f"    {json.dumps(name)}: {json.dumps('' if '${{' in default else default)},")
    return "DEFAULTS: dict[str, str] = {\n" + "\n".join(rows) + "\n}\n"


def inputs_list() -> str:
    names = ", ".join(f"`{name}`" for name in _inputs())
    return f"- **Inputs** (all optional; defaults and meanings in [docs/action.md](docs/action.md#inputs)): {names}.\n"


BLOCKS = {
    "README.md": {"comment-example": readme_example, "action-inputs": inputs_list},
    "docs/action.md": {"action-inputs": inputs_table, "comment-example": action_comment_example},
    "src/rubric_gate/action/config.py": {"action-defaults": action_defaults},
}


def _replace(text: str, name: str, content: str, path: str) -> str:
    if path.endswith(".py"):
        pattern = re.compile(rf"(# generated:{name}\b[^\n]*\n)(.*?)(# /generated:{name}\b)", re.S)
    else:
        pattern = re.compile(rf"(<!-- generated:{name} -->\n)(.*?)(<!-- /generated:{name} -->)", re.S)
    if not pattern.search(text):
        raise SystemExit(f"{path}: no generated:{name} block")
    return pattern.sub(lambda m: m.group(1) + content + m.group(3), text, count=1)


def render(path: str) -> str:
    text = (ROOT / path).read_text(encoding="utf-8")
    for name, make in BLOCKS[path].items():
        text = _replace(text, name, make(), path)
    return text


def main(argv: list[str]) -> int:
    stale = []
    for path in BLOCKS:
        new = render(path)
        if new != (ROOT / path).read_text(encoding="utf-8"):
            stale.append(path)
            if "--check" not in argv:
                (ROOT / path).write_text(new, encoding="utf-8")
    if stale and "--check" in argv:
        print(f"stale generated blocks in {', '.join(stale)}: run python scripts/render_docs.py", file=sys.stderr)
        return 1
    for path in stale:
        print(f"rewrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
