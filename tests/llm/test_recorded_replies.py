"""Every model-calling command, run against SmolLM2-135M's recorded replies (cut off at the
token cap, looping, copying the prompt's placeholders), ends well-formed: no crash, every call
left without a valid answer named with its cause, the exit code its command promises, totals
printed, and one JSON object from each JSON mode, success or not.

The replies were recorded by `benchmarks/realmodel.py --record` (llama-server on 127.0.0.1) and
are replayed by tests/fakes/replay.py at the HTTP boundary, so the real `openai` SDK meets them.
The commands and their repository are tests/support/realmodel.py's, run in order as recorded.
Two recordings:

- `replies.jsonl`: every command, recorded with the code as it is (record it again when a change
  makes the CLI ask what it lacks: the replay fails loudly, it never makes a reply up);
- `replies-unbounded.jsonl`: `judge`, `check` and `check --suggest-repairs`, recorded before reply
  schemas were bounded (main 8e4996f): the judge's quotes loop until the 400-token cap (122 of
  146 replies). Today's code asks those commands the same questions, so it meets the loops again.
"""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.fakes.llm import SDK_VARIABLES
from tests.fakes.replay import FIXTURE, Recording, ReplayLLM, Served, blocks, call_cause, describe
from tests.support.cli import rubric_gate
from tests.support.realmodel import HEAD, REPO, RUBRIC, STEPS, Step, make_repository

RECORDINGS = {"current": FIXTURE, "unbounded": FIXTURE.with_name("replies-unbounded.jsonl")}
TIMEOUT_S = 2.0  # the CLI's request timeout in the replay: a recorded timeout hangs longer
SPEED = 500.0  # replies arrive in their recorded order, 500 times faster (a 50 s reply in 0.1 s)
CAUSE_WORDS = {
    "cut off": r"cut off",
    "timeout": r"time[ds]? ?out",
    "connection": r"connect",
    "invalid": r"invalid|not JSON|expected|schema|not one of|unknown|does not occur|copied",
    "other": r"HTTP \d{3}|server error|rate limit",
}


@dataclass
class Replayed:
    step: Step
    result: subprocess.CompletedProcess[str]
    served: list[Served]
    unused: list[Any]
    repo: Path

    @property
    def output(self) -> str:
        return self.result.stdout + "\n" + self.result.stderr

    def failed(self) -> dict[str, tuple[Served, str]]:
        """The step's calls left without a valid answer: material key -> (its last ask, the cause)."""
        asks: dict[str, list[Served]] = {}
        for served in self.served:
            asks.setdefault(served.call.key, []).append(served)
        failed = {key: (asked[-1], call_cause(s.call for s in asked)) for key, asked in asks.items()}
        return {key: (served, cause) for key, (served, cause) in failed.items() if cause is not None}


def replay(path: Path, tmp: Path) -> dict[str, Replayed]:
    """The recording's commands, in order, in one fresh repository, answered from the recording."""
    recording = Recording.load(path)
    steps = {step.name: step for step in STEPS}
    fake = ReplayLLM(recording, hang_seconds=TIMEOUT_S + 1, speed=SPEED).start()
    runs: dict[str, Replayed] = {}
    try:
        with pytest.MonkeyPatch.context() as env:
            for name in (*SDK_VARIABLES, "ANTHROPIC_BASE_URL", "RUBRIC_GATE_TEMPERATURE", "RUBRIC_GATE_MAX_RETRIES",
                         "RUBRIC_GATE_MAX_REASKS", "RUBRIC_GATE_MAX_CONNECTION_FAILURES", "COLUMNS", "LINES"):
                env.delenv(name, raising=False)
            env.setenv("OPENAI_BASE_URL", fake.openai_url)
            env.setenv("OPENAI_API_KEY", "sk-test-openai-SECRET")
            env.setenv("RUBRIC_GATE_RETRY_BASE", "0.01")
            env.setenv("RUBRIC_GATE_JUDGE_TIMEOUT", str(TIMEOUT_S))
            env.setenv("RUBRIC_GATE_INDEX_DIR", str(tmp / "index"))
            env.setenv("RUBRIC_GATE_CRASH_LOG_DIR", str(tmp / "crashes"))
            repo = make_repository(tmp / "repo")
            for recorded in recording.steps:
                step = steps[recorded["step"]]
                if step.before is not None:
                    step.before(repo)
                fake.step = step.name
                first = len(fake.served)
                result = rubric_gate(repo, *step.argv)
                runs[step.name] = Replayed(step, result, fake.served[first:], fake.unused(step.name), repo)
    finally:
        fake.stop()
    if fake.misses:
        pytest.fail(f"the CLI asked what {path.name} lacks; record again with `python benchmarks/realmodel.py "
                    "--llama-server PATH --timeout 600 --record`:\n" + describe(fake.misses))
    return runs


@pytest.fixture(scope="module")
def replayed(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], dict[str, Replayed]]:
    """recording name -> its replayed commands (each recording is replayed once per module)."""
    done: dict[str, dict[str, Replayed] | str] = {}

    def get(name: str) -> dict[str, Replayed]:
        if name not in done:
            try:
                done[name] = replay(RECORDINGS[name], tmp_path_factory.mktemp(name))
            except pytest.fail.Exception as exc:
                done[name] = str(exc)  # every test of this recording fails with it, none replays again
        runs = done[name]
        if isinstance(runs, str):
            pytest.fail(runs)
        return runs

    return get


def cases(only: Callable[[Step], bool] = lambda step: True) -> list[Any]:
    """(recording, step) for each recorded step `only` keeps."""
    steps = {step.name: step for step in STEPS}
    return [pytest.param(name, recorded["step"], id=f"{name}-{recorded['step']}")
            for name, path in RECORDINGS.items() for recorded in Recording.load(path).steps
            if recorded["step"] in steps and only(steps[recorded["step"]])]


def _names() -> tuple[dict[str, str], dict[str, str]]:
    """Check text -> check id (v1 and v2) and item output -> item id, whitespace-normalised."""
    checks: dict[str, str] = {}
    for path in (RUBRIC, HEAD):
        for check in yaml.safe_load((REPO / path).read_text(encoding="utf-8"))["checks"]:
            checks[" ".join(check["text"].split())] = check["id"]
    items = {}
    for line in (REPO / "calibration" / "security-mini.jsonl").read_text(encoding="utf-8").splitlines():
        item = json.loads(line)
        items[" ".join(item["output"].split())] = item["id"]
    return checks, items


CHECK_IDS, ITEM_IDS = _names()


def _pairs(served: Served) -> list[tuple[str, str]]:
    """The (check id, item id) pairs a judge ask is about, when they are the bundled set's:
    one per call in per-check mode, each check of the item in checklist mode."""
    found = dict(served.blocks)
    item = ITEM_IDS.get(found.get("output", ""))
    schema = served.call.request.get("schema")
    if item is None or schema not in ("check_answer", "checklist_answers"):
        return []
    texts = [found.get("check", "")] if schema == "check_answer" else [t for _, t in blocks(found.get("checks", ""))]
    return [(CHECK_IDS[t], item) for t in texts if t in CHECK_IDS]


def _lines(run: Replayed) -> list[str]:
    """The output's lines, with each JSON string (a `failures` entry) as a line of its own."""
    lines = run.output.splitlines()
    try:
        data = json.loads(run.result.stdout)
    except ValueError:
        return lines
    return lines + list(_strings(data))


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


# -- the recordings ---------------------------------------------------------------------------
@pytest.mark.parametrize("name", RECORDINGS)
def test_a_recording_runs_the_bundled_commands_in_their_order(name: str) -> None:
    recorded = [(s["step"], s["argv"]) for s in Recording.load(RECORDINGS[name]).steps]
    expected = [(s.name, list(s.argv)) for s in STEPS]
    if name == "unbounded":  # a part of the commands, in their order
        expected = [e for e in expected if e[0] in {r[0] for r in recorded}]
    assert recorded == expected, "tests/support/realmodel.py's commands changed: record again"


def test_the_recordings_hold_a_real_model_s_messy_replies() -> None:
    """The replay is only worth its name while it has what real models do: replies cut off at
    the token cap, replies refused as invalid, the prompt's placeholders copied back."""
    recordings = [Recording.load(path) for path in RECORDINGS.values()]
    calls = [c for recording in recordings for c in recording.calls]
    causes = [c.cause for c in calls]
    assert causes.count("cut off") >= 20 and causes.count(None) >= 50
    asked: dict[tuple[str, str], list[Any]] = {}
    for call in calls:
        asked.setdefault((call.step, call.key), []).append(call)
    refused = [a for a in asked.values() if any(earlier.cause is None for earlier in a[:-1])]
    assert len(refused) >= 5, "no reply matched its schema and was refused after parsing (asked again)"
    copied = [c for c in calls if "copied exactly" in (c.content or "") or "the phrase of the check" in (c.content or "")]
    assert copied, "no reply copies the prompt's placeholder text"
    assert sum(path.stat().st_size for path in RECORDINGS.values()) < 500_000


# -- every command ----------------------------------------------------------------------------
@pytest.mark.parametrize(("recording", "name"), cases())
def test_no_command_crashes_on_real_replies(replayed: Callable[[str], dict[str, Replayed]], recording: str,
                                            name: str) -> None:
    run = replayed(recording)[name]
    assert run.result.returncode in (0, 1, 2), run.output[-2000:]
    assert "internal error" not in run.output and "Traceback" not in run.output, run.output[-2000:]


@pytest.mark.parametrize(("recording", "name"), cases())
def test_the_replay_takes_the_recorded_course(replayed: Callable[[str], dict[str, Replayed]], recording: str,
                                              name: str) -> None:
    """Every recorded ask was asked again (none is left over), so the tests below see the replies
    the real model gave, not a shorter run."""
    assert [c.request for c in replayed(recording)[name].unused] == []


@pytest.mark.parametrize(("recording", "name"), cases())
def test_every_pair_without_a_valid_answer_is_named_with_its_cause(
        replayed: Callable[[str], dict[str, Replayed]], recording: str, name: str) -> None:
    run = replayed(recording)[name]
    failed = run.failed()
    unnamed = []
    lines = _lines(run)
    more = re.search(r"\(\+(\d+) more\)", run.output)
    for served, cause in failed.values():
        for check, item in _pairs(served):  # an audit, repair, teach or discover question names no pair
            label = re.compile(rf"\b{re.escape(check)}\b.* @ {re.escape(item)}\b")
            if not any(label.search(line) and re.search(CAUSE_WORDS[cause], line, re.IGNORECASE) for line in lines):
                unnamed.append(f"{check} @ {item} ({cause})")
    # A text listing may stop at its first lines and say how many more: the rest are in --json.
    shown = len(unnamed) - (int(more.group(1)) if more and not run.step.json_out else 0)
    assert shown <= 0, f"{len(unnamed)} of the failed pairs not named with their cause:\n" + "\n".join(unnamed[:10]) + \
        "\n--- output:\n" + run.output[-3000:]


@pytest.mark.parametrize(("recording", "name"), cases(lambda step: step.json_out))
def test_a_json_mode_prints_one_json_object_success_or_not(replayed: Callable[[str], dict[str, Replayed]],
                                                           recording: str, name: str) -> None:
    run = replayed(recording)[name]
    data = json.loads(run.result.stdout)  # one value, nothing else on stdout
    assert isinstance(data, dict) and data


TOTALS = re.compile(r"\d+ calls\b.*\d+ tokens in", re.IGNORECASE)


@pytest.mark.parametrize(("recording", "name"), cases())
def test_every_run_that_asked_a_model_prints_its_totals(replayed: Callable[[str], dict[str, Replayed]],
                                                        recording: str, name: str) -> None:
    run = replayed(recording)[name]
    if not run.served:
        pytest.skip("this command asked nothing in the recording")
    assert TOTALS.search(run.result.stderr) or '"input_tokens"' in run.result.stdout, run.output[-2000:]


@pytest.mark.parametrize(("recording", "name"), cases(lambda step: step.argv[0] == "judge"))
def test_judge_exits_2_exactly_when_a_pair_has_no_valid_answer(replayed: Callable[[str], dict[str, Replayed]],
                                                               recording: str, name: str) -> None:
    run = replayed(recording)[name]
    failed_pairs = {pair for served, _ in run.failed().values() for pair in _pairs(served)}
    assert run.result.returncode == (2 if failed_pairs else 0), run.output[-2000:]
    totals = json.loads(run.result.stdout)
    stats = totals.get("totals", [totals])[0] if "totals" in totals else totals
    assert stats["failed"] == len(failed_pairs)


def test_judge_gets_a_verdict_for_95_percent_of_pairs_from_the_real_model(
        replayed: Callable[[str], dict[str, Replayed]]) -> None:
    """Issue 30's measure, on the replies recorded with today's code: a real 135M model's
    replies, read by today's parser, give a valid verdict for at least 95% of the pairs."""
    run = replayed("current")["judge"]
    asked = {pair for served in run.served for pair in _pairs(served)}
    lines = (run.repo / "calibration" / "security-mini.verdicts.jsonl").read_text(encoding="utf-8").splitlines()
    v1 = {" ".join(c["text"].split()): c["id"]
          for c in yaml.safe_load((REPO / RUBRIC).read_text(encoding="utf-8"))["checks"]}
    judged = {(v1.get(" ".join(v["check_text"].split())), v["item"]) for v in map(json.loads, lines)}
    assert len(asked) == 24 and len(asked & judged) >= 0.95 * len(asked)


@pytest.mark.parametrize(("recording", "name"), cases(lambda step: step.argv[0] == "check"))
def test_check_prints_its_decision_whatever_the_advice_does(replayed: Callable[[str], dict[str, Replayed]],
                                                            recording: str, name: str) -> None:
    """Repairs, audits and paraphrases are advice: when the gate's own pairs have verdicts, the
    decision is printed and the exit code is the gate's (0 pass, 1 fail), whatever they do."""
    run = replayed(recording)[name]
    if any(_pairs(served) for served, _ in run.failed().values()):
        assert run.result.returncode == 2  # the gate's own pairs: nothing was decided
        return
    assert run.result.returncode in (0, 1), run.output[-2000:]
    decision = "pass" if run.result.returncode == 0 else "fail"
    assert re.search(rf"\b{decision}\b", run.result.stdout, re.IGNORECASE), run.output[-2000:]


@pytest.mark.parametrize(("recording", "name"), cases(lambda step: step.name == "preview"))
def test_preview_never_calls_an_unanswered_judge_bad_input(replayed: Callable[[str], dict[str, Replayed]],
                                                           recording: str, name: str) -> None:
    run = replayed(recording)[name]
    if run.failed():
        assert "bad input" not in run.output.lower(), run.output[-2000:]


@pytest.mark.parametrize("recording", RECORDINGS)
def test_no_stored_quote_is_absent_from_its_output(replayed: Callable[[str], dict[str, Replayed]],
                                                   recording: str) -> None:
    """A quote the model made up is kept apart (`unverified_quote`), never stored as evidence."""
    repo = next(iter(replayed(recording).values())).repo
    outputs = {item_id: text.lower() for text, item_id in ITEM_IDS.items()}
    made_up, stored = [], 0
    for path in sorted((repo / "calibration").glob("*.verdicts.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            verdict = json.loads(line)
            stored += 1
            quote = " ".join(str(verdict.get("quote") or "").split()).lower()
            if quote and quote not in outputs.get(verdict["item"], ""):
                made_up.append(f"{path.name}: {verdict['check']} @ {verdict['item']}: {quote[:60]!r}")
    assert stored and made_up == []
