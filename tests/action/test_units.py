"""Small pure pieces of the action: globs, truncation, inputs."""

from __future__ import annotations

from pathlib import Path

import pytest

from rubric_gate.action.commits.changed import matches_any
from rubric_gate.action.config import DEFAULTS, load_config, read_input
from rubric_gate.action.render import MARKER, fit
from rubric_gate.errors import InputError


@pytest.mark.parametrize(("path", "expected"), [
    ("rubrics/a.yaml", True),
    ("rubrics/team/b.yml", True),
    ("rubrics/a.json", False),
    ("other/rubrics/a.yaml", False),
    ("rubricsx/a.yaml", False),
])
def test_default_glob(path: str, expected: bool) -> None:
    assert matches_any(path, (DEFAULTS["rubrics"],)) is expected


@pytest.mark.parametrize(("glob", "path", "expected"), [
    ("rubrics/[ab]*.yaml", "rubrics/alpha.yaml", True),
    ("rubrics/[ab]*.yaml", "rubrics/cat.yaml", False),
    ("rubrics/[!a]*.yaml", "rubrics/cat.yaml", True),
    ("rubrics/[!a]*.yaml", "rubrics/alpha.yaml", False),
    ("rubrics/v[0-9].yaml", "rubrics/v2.yaml", True),
    ("rubrics[/]x.yaml", "rubrics/x.yaml", False),  # a class never spans directories
    ("rubrics/[.yaml", "rubrics/[.yaml", True),  # an unclosed bracket is itself
    ("rubrics/[!].yaml", "rubrics/[!].yaml", True),  # and so is an empty class
])
def test_glob_character_classes(glob: str, path: str, expected: bool) -> None:
    assert matches_any(path, (glob,)) is expected


def test_fit_keeps_short_bodies_and_cuts_long_ones_with_a_note() -> None:
    assert fit("short", 100) == "short"
    body = MARKER + "\n<details>\n\n```yaml\n" + "line\n" * 50_000 + "```\n</details>\n"
    cut = fit(body)
    assert len(cut) <= 65536
    assert cut.startswith(MARKER) and "Truncated" in cut
    assert cut.count("```") % 2 == 0 and cut.count("<details>") == cut.count("</details>")


def _env(**extra: str) -> dict[str, str]:
    return {"GITHUB_EVENT_NAME": "pull_request", "GITHUB_EVENT_PATH": "/e.json",
            "GITHUB_REPOSITORY": "o/r", "GITHUB_WORKSPACE": "/ws", **extra}


def test_absent_and_empty_inputs_take_the_defaults() -> None:
    config = load_config(_env(INPUT_FAIL_ON=""))
    assert config.fail_on == "rejected" and config.override_label == "rubric-gate:override"
    assert config.trust_pr_verdicts and config.comment and config.judges == ()
    assert config.output_dir == Path("/ws/.rubric-gate")
    assert config.api_url == "https://api.github.com"
    assert read_input({"INPUT_OVERRIDE_LABEL": "ship-it"}, "override_label") == "ship-it"


def test_several_globs_and_enterprise_api() -> None:
    config = load_config(_env(INPUT_RUBRICS="a/*.yaml, b/**/*.yml\nc.yaml",
                              GITHUB_API_URL="https://ghe.example.com/api/v3"))
    assert config.rubric_globs == ("a/*.yaml", "b/**/*.yml", "c.yaml")
    assert config.api_url == "https://ghe.example.com/api/v3"


@pytest.mark.parametrize(("name", "value"), [("trust_pr_verdicts", "maybe"), ("judge", "claude"),
                                             ("concurrency", "0"), ("fail_on", "always")])
def test_bad_inputs_are_input_errors(name: str, value: str) -> None:
    with pytest.raises(InputError):
        load_config(_env(**{f"INPUT_{name.upper()}": value}))


@pytest.mark.parametrize(("inputs", "message"), [
    ({"INPUT_BATCH": "true", "INPUT_SAMPLES": "3"}, "input batch: batch judging asks one judge once per pair"),
    ({"INPUT_BATCH": "true", "INPUT_PARAPHRASES": "2"}, "input batch: batch judging asks one judge once per pair"),
    ({"INPUT_BATCH": "true", "INPUT_JUDGE": "openai:a,openai:b"}, "input batch: batch judging asks one judge"),
    ({"INPUT_SAMPLES": "2"}, "input samples: must be an odd number"),
    ({"INPUT_MIN_STABILITY": "1.5"}, "input min_stability: expected a number between 0 and 1"),
])
def test_the_judging_inputs_follow_the_gate_services_rules_naming_the_input(inputs: dict, message: str) -> None:
    """One rule (service.check_judging) for `check`'s options and the action's inputs; checked
    up front, with no judge input (a rubric's own `judge` key may still supply one)."""
    with pytest.raises(InputError) as caught:
        load_config(_env(**inputs))
    assert caught.value.message.startswith(message), caught.value.message


def test_batch_with_one_judge_and_one_sample_is_accepted() -> None:
    config = load_config(_env(INPUT_BATCH="true", INPUT_JUDGE="openai:a"))
    assert config.request.batch and config.judges == ("openai:a",)


def test_the_judging_inputs_are_one_request_a_rubrics_own_judge_may_take_up() -> None:
    """With no `judge` input, the inputs asking a judge for more (samples) wait for a rubric's own
    `judge` key; a rubric without one is replayed."""
    config = load_config(_env(INPUT_SAMPLES="3", INPUT_CONCURRENCY="4", INPUT_AUDIT="true", INPUT_BATCH_WAIT="2"))
    assert config.judges == () and config.request.awaiting_judges
    judged = config.request.judged_by(("openai:a",))
    assert (judged.judges, judged.samples, judged.concurrency, judged.audit) == (("openai:a",), 3, 4, True)
    assert judged.batch_wait_seconds == 120 and judged.batch_progress is False and not judged.awaiting_judges
    replay = config.request.judged_by(())
    assert (replay.judges, replay.samples, replay.audit) == ((), 1, True)


def test_fit_in_bytes_keeps_multibyte_text_under_a_byte_limit() -> None:
    body = MARKER + "\n" + "Prüfung für Überläufe ✅\n" * 5000
    assert len(body) < 200_000 and len(body.encode()) > 65535
    cut = fit(body, 65535, unit="bytes")
    assert len(cut.encode("utf-8")) <= 65535 and "Truncated" in cut and "bytes" in cut
    assert fit("ü" * 10, 20, unit="bytes") == "ü" * 10


def test_rest_reader_names_the_line_of_invalid_utf8() -> None:
    import base64
    from types import SimpleNamespace

    import pytest

    from rubric_gate.action.commits.sources import RestReader
    from rubric_gate.errors import InputError

    entry = SimpleNamespace(path="calibration/x.jsonl", mode="100644", type="blob", sha="0" * 40, size=25)
    tree = SimpleNamespace(raw_data={"truncated": False}, tree=[entry])
    blob = SimpleNamespace(content=base64.b64encode(b'{"id": "a"}\n{"id": "b\xff"}\n').decode())
    repo = SimpleNamespace(get_git_tree=lambda sha, recursive: tree, get_git_blob=lambda sha: blob)
    with pytest.raises(InputError, match=r"abc:calibration/x.jsonl:2: not UTF-8 text \(byte 10 of the line\)"):
        RestReader(repo).read("abc", "calibration/x.jsonl")  # type: ignore[arg-type]


def test_the_action_does_not_import_the_cli() -> None:
    """The action and `check` share the gate service; neither reaches into the other."""
    import ast
    from pathlib import Path

    import rubric_gate.action

    offenders = []
    for path in Path(rubric_gate.action.__file__).parent.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [node.module or ""] if isinstance(node, ast.ImportFrom) else \
                [a.name for a in node.names] if isinstance(node, ast.Import) else []
            offenders += [f"{path.name}: {n}" for n in names if n == "rubric_gate.cli" or n.startswith("rubric_gate.cli.")]
    assert offenders == []
