"""judge_missing through the real SDKs against the fake server: routing, reuse, faults."""

from __future__ import annotations

import re
import time

import pytest

from rubric_gate.calibration import CalibrationItem, CalibrationSet
from rubric_gate.errors import JudgeAuthError, JudgeError
from rubric_gate.judges import (
    CHECKLIST_PROMPT_VERSION,
    PROMPT_VERSION,
    judge_missing,
    missing_pairs,
)
from rubric_gate.llm.pricing import model_price
from rubric_gate.rubric import Check, Rubric
from rubric_gate.verdicts import VerdictStore, task_hash
from tests.fakes.llm import FakeLLM, prompt_of
from tests.judges.conftest import expected, make_items, make_rubric

JUDGES = ["anthropic:claude-haiku-4-5", "openai:gpt-4o-mini"]


def fresh_store(tmp_path) -> VerdictStore:
    return VerdictStore.load(tmp_path / "verdicts.jsonl", missing_ok=True)


def assert_routed(store: VerdictStore, items: CalibrationSet, judge: str, prompt: str = PROMPT_VERSION) -> None:
    by_id = {i.id: i for i in items.items}
    for verdict in VerdictStore.load(store.path):
        assert verdict.judge == judge and verdict.prompt == prompt
        item = by_id[verdict.item]
        assert verdict.item_hash == item.content_hash
        assert verdict.answer == expected(verdict.check_text, item.output), verdict


@pytest.mark.parametrize("judge", JUDGES)
def test_answers_routed_to_their_pairs_under_concurrency(fake: FakeLLM, tmp_path, judge: str) -> None:
    fake.delay = 0.02
    rubric, items, store = make_rubric(), make_items(16), fresh_store(tmp_path)
    stats = judge_missing([rubric], items, store, judge, concurrency=8, progress=False)
    assert (stats.calls, stats.reused, stats.failed) == (80, 0, 0)
    assert 1 < fake.max_in_flight <= 8
    assert len(VerdictStore.load(store.path)) == 80
    assert_routed(store, items, judge)
    assert (stats.input_tokens, stats.output_tokens) == (8000, 800)
    price_in, price_out = model_price(judge.split(":", 1)[1]) or (0.0, 0.0)
    assert price_in > 0 and stats.cost_usd == pytest.approx((8000 * price_in + 800 * price_out) / 1_000_000)
    assert "80 calls" in stats.to_dict()["summary"]


def test_structured_output_requested(fake: FakeLLM, tmp_path) -> None:
    rubric, items = make_rubric(["apple"]), make_items(1)
    judge_missing([rubric], items, fresh_store(tmp_path), JUDGES[0], progress=False)
    judge_missing([rubric], items, fresh_store(tmp_path / "o"), JUDGES[1], progress=False)
    anthropic_body, openai_body = fake.bodies
    assert anthropic_body["output_config"]["format"]["type"] == "json_schema"
    assert openai_body["response_format"]["json_schema"]["strict"] is True
    assert openai_body["temperature"] == 0


def test_rerun_judges_nothing(fake: FakeLLM, tmp_path) -> None:
    rubric, items = make_rubric(), make_items()
    judge_missing([rubric], items, fresh_store(tmp_path), JUDGES[0], progress=False)
    before = fake.received
    stats = judge_missing([rubric], items, fresh_store(tmp_path), JUDGES[0], progress=False)
    assert fake.received == before
    assert (stats.calls, stats.reused) == (0, 40)


def test_rerun_with_no_key_and_nothing_to_do_needs_no_key(fake: FakeLLM, tmp_path, monkeypatch) -> None:
    rubric, items = make_rubric(), make_items()
    judge_missing([rubric], items, fresh_store(tmp_path), JUDGES[0], progress=False)
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    assert judge_missing([rubric], items, fresh_store(tmp_path), JUDGES[0], progress=False).calls == 0


def test_edit_rejudges_only_affected_pairs(fake: FakeLLM, tmp_path) -> None:
    rubric, items = make_rubric(), make_items()
    judge_missing([rubric], items, fresh_store(tmp_path), JUDGES[0], progress=False)
    checks = list(rubric.checks)
    # Reorder, rename an id, delete a check, reflow whitespace: nothing to judge.
    shuffled = [checks[3], Check(id="renamed", text=checks[0].text + "  "), checks[1], checks[4]]
    store = fresh_store(tmp_path)
    assert missing_pairs([rubric.model_copy(update={"checks": shuffled})], items, store, JUDGES[0]) == []
    # Reword one check: exactly its 8 pairs, base and head together.
    reworded = [*checks[:2], Check(id="k2", text="The report clearly mentions plum"), *checks[3:]]
    head = rubric.model_copy(update={"checks": reworded})
    before = fake.received
    stats = judge_missing([rubric, head], items, store, JUDGES[0], progress=False)
    assert (stats.calls, stats.reused) == (8, 40)
    assert fake.received - before == 8
    assert {c for c, _, _ in fake.answered[-8:]} == {"The report clearly mentions plum"}
    # Edit one item's output: that item's 5 pairs.
    edited = list(items.items)
    edited[3] = edited[3].model_copy(update={"output": "kiwi only"})
    stats = judge_missing([head], CalibrationSet(tuple(edited), "cal"), store, JUDGES[0], progress=False)
    assert stats.calls == 5
    # A new prompt version or another judge re-judges everything.
    assert len(missing_pairs([head], items, store, JUDGES[1])) == 40


def test_429_with_retry_after_is_honoured_and_lowers_concurrency(fake: FakeLLM, tmp_path, monkeypatch) -> None:
    fake.retry_after = "0.3"
    fake.script = ["429"] * 6
    monkeypatch.setenv("RUBRIC_GATE_RATE_COOLDOWN", "0")
    rubric, items = make_rubric(["apple", "pear"]), make_items(4)
    started = time.monotonic()
    stats = judge_missing([rubric], items, fresh_store(tmp_path), JUDGES[1], concurrency=8, progress=False)
    assert time.monotonic() - started >= 0.3
    assert (stats.calls, stats.retries, stats.failed) == (8, 6, 0)
    assert stats.lowest_concurrency < 8
    assert "concurrency lowered" in stats.summary
    assert_routed(fresh_store(tmp_path), items, JUDGES[1])


@pytest.mark.parametrize("judge", JUDGES)
def test_500_is_retried(fake: FakeLLM, tmp_path, judge: str) -> None:
    fake.script = ["500", "500"]
    stats = judge_missing([make_rubric(["apple"])], make_items(3), fresh_store(tmp_path), judge, progress=False)
    assert (stats.calls, stats.retries, stats.failed) == (3, 2, 0)


def test_persistent_500_gives_up_and_reports(fake: FakeLLM, tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("RUBRIC_GATE_MAX_RETRIES", "2")
    fake.rules = {"mentions pear": "500"}
    store = fresh_store(tmp_path)
    with pytest.raises(JudgeError, match=r"2 pairs have no valid answer.*k1 @ r0: gave up after 2 retries"):
        judge_missing([make_rubric(["apple", "pear"])], make_items(2), store, JUDGES[0], progress=False)
    assert len(VerdictStore.load(store.path)) == 2  # the good ones were saved


@pytest.mark.parametrize("judge", JUDGES)
def test_timeouts_are_retried(fake: FakeLLM, tmp_path, monkeypatch, judge: str) -> None:
    monkeypatch.setenv("RUBRIC_GATE_JUDGE_TIMEOUT", "0.3")
    fake.hang_seconds = 1.0
    fake.script = ["hang"]
    stats = judge_missing([make_rubric(["apple"])], make_items(2), fresh_store(tmp_path), judge,
                          concurrency=1, progress=False)
    assert (stats.calls, stats.retries, stats.failed) == (2, 1, 0)


@pytest.mark.parametrize("behaviour", ["nonjson", "badjson"])
@pytest.mark.parametrize("judge", JUDGES)
def test_malformed_reply_is_asked_again(fake: FakeLLM, tmp_path, judge: str, behaviour: str) -> None:
    fake.script = [behaviour]
    store = fresh_store(tmp_path)
    stats = judge_missing([make_rubric(["apple"])], make_items(1), store, judge, progress=False)
    assert (stats.calls, stats.retries, stats.failed) == (2, 1, 0)
    assert_routed(store, make_items(1), judge)


@pytest.mark.parametrize("behaviour", ["nonjson", "badjson"])
def test_never_valid_reply_fails_without_guessing(fake: FakeLLM, tmp_path, behaviour: str) -> None:
    fake.rules = {"mentions pear": behaviour}
    store = fresh_store(tmp_path)
    with pytest.raises(JudgeError, match=r"3 pairs have no valid answer, none guessed \(3 invalid\)") as info:
        judge_missing([make_rubric(["apple", "pear"])], make_items(3), store, JUDGES[1], progress=False)
    saved = VerdictStore.load(store.path)
    assert {v.check_text for v in saved} == {"The output mentions apple"}
    assert fake.received == 3 + 3 * 3  # each bad pair asked 1 + 2 times
    assert info.value.stats.failed == 3  # type: ignore[attr-defined]


@pytest.mark.parametrize("judge", JUDGES)
def test_auth_failure_stops_at_once(fake: FakeLLM, tmp_path, judge: str) -> None:
    fake.delay = 0.05
    fake.rules = {"mentions": "401"}
    with pytest.raises(JudgeAuthError) as info:
        judge_missing([make_rubric()], make_items(16), fresh_store(tmp_path), judge, concurrency=4, progress=False)
    assert "authentication failed" in info.value.message
    assert "SECRET" not in info.value.message
    time.sleep(0.2)
    assert fake.received <= 8  # the first wave, not all 80 pairs


@pytest.mark.parametrize(("judge", "var"), [(JUDGES[0], "ANTHROPIC_API_KEY"), (JUDGES[1], "OPENAI_API_KEY")])
def test_missing_key_is_one_clear_line(fake: FakeLLM, tmp_path, monkeypatch, judge: str, var: str) -> None:
    monkeypatch.delenv(var)
    monkeypatch.delenv("OPENAI_BASE_URL")
    with pytest.raises(JudgeError, match=var):
        judge_missing([make_rubric()], make_items(), fresh_store(tmp_path), judge, progress=False)
    assert fake.received == 0


def test_local_openai_server_needs_no_key(fake: FakeLLM, tmp_path, monkeypatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY")
    stats = judge_missing([make_rubric(["fig"])], make_items(2), fresh_store(tmp_path), "openai:llama3", progress=False)
    assert stats.calls == 2 and stats.cost_usd is None
    assert "cost unknown" in stats.summary


def test_max_calls_refuses_before_any_call(fake: FakeLLM, tmp_path) -> None:
    with pytest.raises(JudgeError, match=r"40 calls needed, above --max-calls 39"):
        judge_missing([make_rubric()], make_items(), fresh_store(tmp_path), JUDGES[0], max_calls=39, progress=False)
    assert fake.received == 0
    assert judge_missing([make_rubric()], make_items(), fresh_store(tmp_path), JUDGES[0],
                         max_calls=40, progress=False).calls == 40


def test_dry_run_makes_no_call(fake: FakeLLM, tmp_path, monkeypatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    store = fresh_store(tmp_path)
    stats = judge_missing([make_rubric()], make_items(), store, "anthropic:claude-sonnet-4-6", dry_run=True)
    assert fake.received == 0 and not store.path.exists()
    assert stats.planned == 40 and stats.cost_usd is not None and stats.cost_usd > 0
    assert "would make 40 calls" in stats.summary
    unknown = judge_missing([make_rubric()], make_items(), store, "openai:my-local-model", dry_run=True)
    assert unknown.cost_usd is None and "cost unknown" in unknown.summary


@pytest.mark.parametrize("judge", JUDGES)
def test_checklist_mode_one_call_per_item(fake: FakeLLM, tmp_path, judge: str) -> None:
    items, store = make_items(8), fresh_store(tmp_path)
    stats = judge_missing([make_rubric()], items, store, judge, mode="checklist", progress=False)
    assert stats.calls == 8 and len(VerdictStore.load(store.path)) == 40
    assert_routed(store, items, judge, CHECKLIST_PROMPT_VERSION)
    assert sum(v.usage.input_tokens for v in VerdictStore.load(store.path)) == 800  # type: ignore[union-attr]
    # Only the checks still missing are asked: a new check costs one call per item.
    head = make_rubric([*["apple", "pear", "plum", "fig", "kiwi"], "melon"])
    assert judge_missing([head], items, store, judge, mode="checklist", progress=False).calls == 8
    assert prompt_of(fake.bodies[-1]).count("<check id=") == 1


def test_duplicate_item_content_is_judged_once(fake: FakeLLM, tmp_path) -> None:
    twin = CalibrationSet((CalibrationItem(id="a", input="x", output="apple", label="pass"),
                           CalibrationItem(id="b", input="x", output="apple", label="fail")), "cal")
    store = fresh_store(tmp_path)
    assert judge_missing([make_rubric(["apple"])], twin, store, JUDGES[0], progress=False).calls == 1
    assert all(store.find("The output mentions apple", i, judge=JUDGES[0], prompt=PROMPT_VERSION,
                          task=task_hash("List fruit.")) for i in twin.items)


def test_callable_from_a_running_event_loop(fake: FakeLLM, tmp_path) -> None:
    import asyncio

    async def inside() -> int:
        return judge_missing([make_rubric(["kiwi"])], make_items(2), fresh_store(tmp_path), JUDGES[0],
                             progress=False).calls

    assert asyncio.run(inside()) == 2


@pytest.mark.parametrize("behaviour", ["nonjson", "badjson"])
def test_every_reply_failing_the_same_way_stops_early(fake: FakeLLM, tmp_path, behaviour: str) -> None:
    fake.rules = {"mentions": behaviour}  # every check: the model cannot produce the format
    store = fresh_store(tmp_path)
    with pytest.raises(JudgeError, match=r"replies all failed to parse the same way .*stopped early"):
        judge_missing([make_rubric()], make_items(8), store, JUDGES[0], concurrency=2, progress=False)
    assert fake.received < 20  # not 40 pairs x 3 replies
    assert not store.path.exists() or store.path.read_text() == ""  # nothing guessed


def test_every_reply_cut_off_stops_early_saying_so_and_naming_the_pairs(fake: FakeLLM, tmp_path) -> None:
    """Replies cut off at the token cap are the model not finishing, not the format: the early
    stop says which, names the pairs, and says what in flight it abandons."""
    fake.rules = {"mentions": "cutoff"}
    fake.delay = 0.05  # the other calls are still in flight when the tenth reply arrives
    with pytest.raises(JudgeError) as caught:
        judge_missing([make_rubric()], make_items(8), fresh_store(tmp_path), JUDGES[1], concurrency=4,
                      progress=False)
    message = caught.value.message
    assert re.search(r"the first \d+ replies were all cut off at 400 tokens \(the model ran to the token cap without "
                     r"finishing its JSON answer\)", message), message
    assert "failed to parse" not in message and "JSON answer format" not in message
    assert re.search(r"for k\d @ r\d, k\d @ r\d, k\d @ r\d, k\d @ r\d, k\d @ r\d and \d+ more; stopped early", message)
    assert re.search(r"stopped early; [1-3] calls? in flight abandoned, their pairs unanswered$", message), message


def test_two_texts_of_one_check_are_two_pairs_named_apart(fake: FakeLLM, tmp_path) -> None:
    """A reworded check is judged under its base and its head text: a failure listing names the
    two pairs apart (which text), and a check with one text stays as it was named."""
    base = make_rubric(["apple", "pear"])
    head = make_rubric(["apple", "plum"])  # k1 reworded: pear -> plum
    names = [p.name for p in missing_pairs([base, head], make_items(2), fresh_store(tmp_path), JUDGES[0])]
    assert sorted(names) == ["k0 @ r0", "k0 @ r1", "k1 (base) @ r0", "k1 (base) @ r1", "k1 (head) @ r0",
                             "k1 (head) @ r1"]
    other = Rubric(id="veg", version=1, task="List fruit.", calibration="cal.jsonl", verdicts="v.jsonl",
                   checks=[Check(id="k1", text="The output mentions leek")])
    names = {p.name for p in missing_pairs([base, other], make_items(1), fresh_store(tmp_path), JUDGES[0])}
    assert names == {"k0 @ r0", "k1 (fruit) @ r0", "k1 (veg) @ r0"}
    fake.rules = {"mentions plum": "nonjson", "mentions pear": "nonjson"}
    with pytest.raises(JudgeError) as caught:
        judge_missing([base, head], make_items(1), fresh_store(tmp_path), JUDGES[0], progress=False)
    failures = caught.value.failures  # type: ignore[attr-defined]
    assert sorted(f.split(":")[0] for f in failures) == ["k1 (base) @ r0", "k1 (head) @ r0"]


def test_replay_check_does_not_load_the_judging_stack(tmp_path) -> None:
    import subprocess
    import sys

    from tests.support.project import write_example

    project = write_example(tmp_path)
    code = (
        "import sys, io, contextlib\n"
        "from rubric_gate.cli.main import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    code = main(['check', '--base', 'rubrics/demo.yaml', '--head', 'rubrics/demo.yaml', '--root', '.', '--replay'])\n"
        "loaded = [m for m in ('asyncio', 'rich.progress', 'anthropic', 'openai', 'rubric_gate.judges.runner')"
        " if m in sys.modules]\n"
        "print(code, loaded)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=project.root, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "0 []", out.stdout + out.stderr
