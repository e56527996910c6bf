"""The `rubrics` globs (rubric_gate.globs): the semantics the action has always had, plus braces
and `!` exclusions, with one meaning for every caller."""

from __future__ import annotations

import pytest

from rubric_gate.action.config import load_config
from rubric_gate.globs import matches_any, normalize_glob, split_globs, unmatched_globs

PATHS = ["rubrics/a.yaml", "rubrics/team/B.YML", "rubrics/drafts/wip.yaml", "rubrics/notes.md",
         "other/rubrics/c.yaml", "rubrics/.hidden.yaml"]


def _matched(*globs: str) -> list[str]:
    return [p for p in PATHS if matches_any(p, globs)]


@pytest.mark.parametrize(("globs", "expected"), [
    (("rubrics/**/*.{yaml,yml}",), ["rubrics/a.yaml", "rubrics/team/B.YML", "rubrics/drafts/wip.yaml",
                                    "rubrics/.hidden.yaml"]),
    (("rubrics/**/*.{yaml,yml}", "!rubrics/drafts/**"), ["rubrics/a.yaml", "rubrics/team/B.YML",
                                                          "rubrics/.hidden.yaml"]),
    (("!rubrics/drafts/**", "rubrics/**/*.y*ml"), ["rubrics/a.yaml", "rubrics/team/B.YML",
                                                   "rubrics/.hidden.yaml"]),  # order does not matter
    (("rubrics", "!rubrics/drafts"), ["rubrics/a.yaml", "rubrics/team/B.YML", "rubrics/.hidden.yaml"]),
    (("rubrics/*.yaml", "!**/.*"), ["rubrics/a.yaml"]),
    (("!rubrics/drafts/**",), []),  # exclusions alone include nothing
    (("./rubrics/{a,team/b}.y*ml",), ["rubrics/a.yaml", "rubrics/team/B.YML"]),
    (("/rubrics/", "other"), ["rubrics/a.yaml", "rubrics/team/B.YML", "rubrics/drafts/wip.yaml",
                              "other/rubrics/c.yaml", "rubrics/.hidden.yaml"]),
])
def test_braces_exclusions_bare_folders_and_roots(globs: tuple[str, ...], expected: list[str]) -> None:
    assert _matched(*globs) == expected


@pytest.mark.parametrize(("glob", "path", "expected"), [
    ("rubrics/*.yaml", "rubrics/team/a.yaml", False),  # `*` stays in one segment
    ("rubrics/?.yaml", "rubrics/a.yaml", True),
    ("rubrics/?.yaml", "rubrics/ab.yaml", False),
    ("rubrics/**/*.yaml", "rubrics/a.yaml", True),  # `**/` spans zero directories too
    ("rubrics/**/*.yaml", "rubrics/x/y/z/a.yaml", True),
    ("RUBRICS/*.Yaml", "rubrics/A.YAML", True),
    ("rubrics/{a,b", "rubrics/{a,b", True),  # an unclosed brace is itself
    ("rubrics/a.yaml", "rubrics/a.yaml.bak", False),
])
def test_segment_case_and_literal_rules(glob: str, path: str, expected: bool) -> None:
    assert matches_any(path, (glob,)) is expected


def test_normalize_keeps_the_exclusion_mark() -> None:
    assert normalize_glob(" ./rubrics/ ") == "rubrics/**/*.y*ml"
    assert normalize_glob("!/rubrics/drafts") == "!rubrics/drafts/**/*.y*ml"
    assert normalize_glob("rubrics/{a,b}") == "rubrics/{a,b}"  # a pattern, not a folder
    assert normalize_glob("/") == "**/*.y*ml"


def test_split_keeps_commas_inside_braces() -> None:
    assert split_globs("rubrics/**/*.{yaml,yml}, !rubrics/drafts/**\nextra/*.yaml,,") == (
        "rubrics/**/*.{yaml,yml}", "!rubrics/drafts/**", "extra/*.yaml")
    assert split_globs("a}b,c") == ("a}b", "c")  # a stray `}` does not swallow the rest


def test_the_action_input_reads_braces_and_exclusions() -> None:
    env = {"GITHUB_EVENT_NAME": "pull_request", "GITHUB_EVENT_PATH": "/e.json", "GITHUB_REPOSITORY": "o/r",
           "GITHUB_WORKSPACE": "/ws", "INPUT_RUBRICS": "rubrics/**/*.{yaml,yml}\n!rubrics/drafts/**"}
    globs = load_config(env).rubric_globs
    assert globs == ("rubrics/**/*.{yaml,yml}", "!rubrics/drafts/**")
    assert matches_any("rubrics/a.yml", globs) and not matches_any("rubrics/drafts/a.yml", globs)


def test_unmatched_lists_including_globs_that_match_nothing_after_exclusions() -> None:
    assert unmatched_globs(PATHS, ("rubrics/*.yaml", "!rubrics/nothing/**", "typo/*.yaml")) == ["typo/*.yaml"]
    # Everything this glob names is excluded: it gates nothing, which is what a typo looks like.
    assert unmatched_globs(PATHS, ("rubrics/drafts/*.yaml", "!rubrics/drafts/**")) == ["rubrics/drafts/*.yaml"]
