"""The README's and docs/action.md's rendered examples and input lists come from the code."""

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
    assert readme.index("pipx install ./rubric-gate") < readme.index("uses: OWNER/rubric-gate@REF")
    assert readme.index("uses: OWNER/rubric-gate@REF") < readme.index("make example   #")
    # How to make your copy, and point the workflow at it (issue 31).
    assert readme.index("pipx install ./rubric-gate") < readme.index(
        "rubric-gate init --action you/rubric-gate@<commit sha>") < readme.index("make example   #")
    assert "make example   # gate the bundled example" in readme and "make test      # ruff" in readme
