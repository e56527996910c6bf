"""A judge's supporting quote is evidence only when it occurs in the item's output (the same
normaliser the audit's grounding uses): a quote the model made up, or copied from the prompt,
is kept as unverified and counted; a judge whose answers carry no information is named, with
the figures that show it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from rubric_gate.judges import judge_missing
from rubric_gate.llm.replies import occurs_in
from rubric_gate.verdicts import VerdictStore
from tests.fakes.llm import CHECK, OUTPUT, FakeLLM, completion_body, prompt_of
from tests.judges.conftest import make_items, make_rubric, write_project
from tests.support.cli import rubric_gate

OPENAI = "openai:gpt-4o-mini"


def answering(quote_of: Any, answer: Any = None) -> Any:
    """A `respond` hook: per request, the answer and a quote made from (check, output)."""

    def respond(body: dict[str, Any], anthropic: bool) -> tuple[int, dict[str, Any]]:
        prompt = prompt_of(body)
        check = CHECK.search(prompt).group(1)  # type: ignore[union-attr]
        output = OUTPUT.search(prompt).group(1)  # type: ignore[union-attr]
        word = answer(check, output) if answer else ("yes" if check.split()[-1] in output else "no")
        return 200, completion_body(json.dumps({"answer": word, "quote": quote_of(check, output)}))

    return respond


def test_a_made_up_quote_is_kept_as_unverified_never_as_evidence(fake: FakeLLM, tmp_path: Path) -> None:
    fake.respond = answering(lambda check, output: "the basket holds a golden pineapple" if "kiwi" in check
                             else output.split(" and ")[0].upper())  # case differs: still the output's words
    store = VerdictStore.load(tmp_path / "v.jsonl", missing_ok=True)
    stats = judge_missing([make_rubric()], make_items(4), store, OPENAI, progress=False)
    saved = list(VerdictStore.load(store.path))
    kiwi = [v for v in saved if "kiwi" in v.check_text]
    assert all(v.quote is None and v.unverified_quote == "the basket holds a golden pineapple" for v in kiwi)
    others = [v for v in saved if "kiwi" not in v.check_text]
    assert all(v.unverified_quote is None and v.quote is not None for v in others)
    outputs = {i.id: i.output for i in make_items(4).items}
    assert all(occurs_in(v.quote, outputs[v.item]) for v in saved if v.quote)  # no stored quote is absent
    assert (stats.quotes, stats.unverified_quotes) == (20, 4)
    assert "4 of 20 quotes not found in the output (kept as unverified, not as evidence)" in stats.summary


def test_a_judge_answering_the_same_on_every_pair_carries_no_information(fake: FakeLLM, tmp_path: Path) -> None:
    fake.respond = answering(lambda check, output: "", answer=lambda check, output: "yes")
    stats = judge_missing([make_rubric()], make_items(4), VerdictStore.load(tmp_path / "v.jsonl", missing_ok=True),
                          OPENAI, progress=False)
    assert stats.uninformative == "answered 'yes' on all 20 pairs (5 checks, 2 passing and 2 flawed items)"
    assert "its answers carry no information: answered 'yes' on all 20 pairs" in stats.summary


def test_a_judge_copying_the_prompt_back_as_its_quotes_carries_no_information(fake: FakeLLM, tmp_path: Path) -> None:
    placeholder = "the shortest passage of the output your answer rests on, copied exactly"
    fake.respond = answering(lambda check, output: placeholder if "apple" not in check else check)
    stats = judge_missing([make_rubric()], make_items(4), VerdictStore.load(tmp_path / "v.jsonl", missing_ok=True),
                          OPENAI, progress=False)
    assert (stats.quotes, stats.unverified_quotes, stats.copied_quotes) == (20, 20, 20)
    assert stats.uninformative == "20 of its 20 quotes copy the prompt's own words, not the output"


def test_an_informative_judge_is_not_named(fake: FakeLLM, tmp_path: Path) -> None:
    stats = judge_missing([make_rubric()], make_items(8), VerdictStore.load(tmp_path / "v.jsonl", missing_ok=True),
                          OPENAI, progress=False)
    assert stats.uninformative is None and stats.unverified_quotes == 0 and stats.quotes > 0


def test_check_names_an_uninformative_judge_and_unverified_quotes_in_its_report(fake: FakeLLM, tmp_path: Path) -> None:
    fake.respond = answering(lambda check, output: "made up", answer=lambda check, output: "no")
    write_project(tmp_path, make_rubric(), make_items())
    (tmp_path / "base.yaml").write_text((tmp_path / "rubric.yaml").read_text())
    proc = rubric_gate(tmp_path, "check", "--base", "base.yaml", "--head", "rubric.yaml", "--root", ".",
                       "--judge", OPENAI, "--format", "json")
    notes = json.loads(proc.stdout)["notes"]
    assert any("40 of its 40 supporting quotes in this run do not occur in the item's output" in n for n in notes)
    assert any("its answers carry no information: answered 'no' on all 40 pairs (5 checks, 4 passing and 4 flawed"
               in n for n in notes), notes
