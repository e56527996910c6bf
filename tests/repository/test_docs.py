"""The README and docs/ as a user meets them: the rendered examples and input lists come from the
code, every relative link and anchor resolves, every `rubric-gate` command line names a command
and options that exist, and the README stays a short path from install to a required check."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import yaml

from tests.support import gfm

ROOT = Path(__file__).resolve().parents[2]


def _script():
    spec = importlib.util.spec_from_file_location("render_docs", ROOT / "scripts/render_docs.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_generated_blocks_are_current() -> None:
    script = _script()
    for path in script.BLOCKS:
        assert script.render(path) == (ROOT / path).read_text(encoding="utf-8"), (
            f"{path} is stale: run python scripts/render_docs.py")


def test_every_action_input_is_in_both_documents() -> None:
    inputs = yaml.safe_load((ROOT / "action.yml").read_text())["inputs"]
    readme, action_md = (ROOT / "README.md").read_text(), (ROOT / "docs/action.md").read_text()
    for name, spec in inputs.items():
        assert f"`{name}`" in readme
        row = next(line for line in action_md.splitlines() if line.startswith(f"| `{name}` |"))
        assert (f"`{spec['default']}`" if spec.get("default") else "empty") in row


def test_the_examples_render_as_the_comment_does() -> None:
    script = _script()
    report = script.example_report().to_dict()
    readme = script.readme_example()
    root = gfm.parse(readme)
    rejected = next(root.iter("ul"))  # the first list: one item per rejected change
    assert len(list(rejected.iter("li"))) == 5
    paired = [ul for ul in root.iter("ul") if "Correct passed, base" in ul.text()]
    assert len(paired) == 1 and len(list(paired[0].iter("li"))) == 2  # one item per rate, not run together
    body = re.sub(r"^`{4,}markdown\n|`{4,}\n$", "", script.action_comment_example())
    gfm.assert_report_structure(body, report, allowed_links=("https://github.com/OWNER/REPO/actions/runs/1",),
                                own=(script.BASE_SHA[:7], script.HEAD_SHA[:7]))


def test_readme_starts_with_a_user_install_before_the_two_make_commands() -> None:
    readme = (ROOT / "README.md").read_text()
    install = readme.index("## Install")
    # The index install comes first, and says honestly that it works from the first release on,
    # with the clone and git installs for until then.
    assert readme.index("pipx install rubric-gate ", install) < readme.index("uvx rubric-gate", install)
    unreleased = "**no version has been released yet**"
    released = re.search(r"^## \[\d+\.\d+\.\d+\] - ", (ROOT / "CHANGELOG.md").read_text(), re.M)
    assert (unreleased in readme) is (released is None), "say 'not released yet' until the first release, not after"
    if not released:
        assert readme.index("uvx rubric-gate", install) < readme.index(unreleased) < readme.index("pipx install ./rubric-gate")
    # Then the first gated edit, then the action pointed at the user's own copy, then the clone's commands.
    action = "rubric-gate init --action you/rubric-gate@<commit sha>"
    assert readme.index("pipx install ./rubric-gate") < readme.index("## Your first gated edit")
    assert readme.index("## Your first gated edit") < readme.index(action) < readme.index("make example   #")
    assert "make example   # gate the bundled example" in readme and "make test      # ruff" in readme


def test_readme_is_at_most_300_lines() -> None:
    # Reference lives in docs/; the README gets a user from install to a required check.
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 300, f"README.md has {len(lines)} lines: move reference material into docs/"


# Figures in docs/science.md's prose that are not results: citations, the tool's fixed levels and
# notation. Every other number on the page is inside a block scripts/render_docs.py generates.
SCIENCE_PROSE_NUMBERS = (
    "`max_failures` 0 and 1",  # what the order test runs at
    "at 1/2", "p = 1;",  # McNemar's null and its value with no discordant item
    "95%",  # every interval's level (Z95)
    "(1998, method 10)",  # Newcombe's paper
    "near 0 or 1",
    "1e-9", "rounded to 0",  # what full precision means
    "ci95", "exits 1",  # a JSON key, an exit code
    "Table 3", "Tables 2-3", "Table 1", "Figure 4",  # the paper's
    "k + 1", "k >= 1", "1 - flip rate", "about 0 for noise and 1 for a faithful",
    "tests/history/test_chain.py", "R1 to R5", "R1", "R4", "3-round", "round 3", "round 2",
)


def test_every_number_on_the_science_page_comes_from_running_the_code() -> None:
    text = (ROOT / "docs/science.md").read_text(encoding="utf-8")
    script = _script()
    assert set(script.BLOCKS["docs/science.md"]) <= set(re.findall(r"<!-- generated:([\w-]+) -->", text))
    prose = re.sub(r"<!-- generated:([\w-]+) -->\n.*?<!-- /generated:\1 -->", "", text, flags=re.S)
    for phrase in sorted(SCIENCE_PROSE_NUMBERS, key=len, reverse=True):
        prose = prose.replace(phrase, "")
    stray = [line for line in prose.splitlines() if re.search(r"\d", line)]
    assert stray == [], "numbers in docs/science.md outside its generated blocks: " + "; ".join(stray)


def test_the_science_pages_worked_interval_is_the_tools() -> None:
    """The issue's case: 8 correct and 2 flawed items, the head adding a check failing 6 correct
    and both flawed: the paired interval is -92.9 to -28.0 (the page once said -21.4)."""
    text = (ROOT / "docs/science.md").read_text(encoding="utf-8")
    assert "95% CI -92.9 to -28.0; 0 gained, 6 lost; p = 0.031" in text and "-21.4" not in text
