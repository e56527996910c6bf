"""Ask a model for the paraphrases the store lacks, with the judges' retry rules."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from rubric_gate.errors import JudgeAuthError, JudgeError
from rubric_gate.judges.api import run_sync
from rubric_gate.judges.backend import (
    AuthFailure,
    Backend,
    FatalError,
    JudgeRequest,
    TransientError,
    make_backend,
)
from rubric_gate.judges.limits import RetryPolicy
from rubric_gate.judges.spec import parse_judge_spec
from rubric_gate.paraphrase.prompt import SCHEMA, MalformedParaphrase, parse, render
from rubric_gate.paraphrase.store import Paraphrase, ParaphraseStore

MAX_TOKENS = 300
CONCURRENCY = 4


async def _ask(backend: Backend, request: JudgeRequest, policy: RetryPolicy, gate: asyncio.Semaphore) -> str:
    transport = reasks = 0
    while True:
        try:
            async with gate:
                reply = await backend.complete(request)
        except TransientError as exc:
            if transport >= policy.max_retries:
                raise JudgeError(f"paraphraser gave up after {transport} retries ({exc})") from None
            await asyncio.sleep(policy.delay(transport, exc.retry_after))
            transport += 1
            continue
        except AuthFailure as exc:
            raise JudgeAuthError(str(exc)) from None
        except FatalError as exc:
            raise JudgeError(str(exc)) from None
        try:
            return parse(reply.text)
        except MalformedParaphrase as exc:
            if reasks >= policy.max_reasks:
                raise JudgeError(f"paraphraser: no valid paraphrase after {reasks + 1} replies ({exc})") from None
            reasks += 1


async def _generate(model: str, missing: list[tuple[str, int]], count: int, store: ParaphraseStore) -> None:
    backend = make_backend(parse_judge_spec(model))
    policy = RetryPolicy.from_env()
    gate = asyncio.Semaphore(CONCURRENCY)

    async def one(text: str, index: int) -> None:
        # Sampled like extra `--samples` answers, so rewordings differ from one another.
        request = JudgeRequest(render(text, index, count), SCHEMA, "paraphrase", MAX_TOKENS, sampled=True)
        store.append([Paraphrase(text, model, index, await _ask(backend, request, policy, gate))])

    try:
        async with asyncio.TaskGroup() as group:
            for text, index in missing:
                group.create_task(one(text, index))
    except BaseExceptionGroup as grouped:
        raise grouped.exceptions[0] from None
    finally:
        await backend.aclose()


def ensure_paraphrases(check_texts: Sequence[str], model: str, count: int, store: ParaphraseStore) -> tuple[dict[str, list[str]], int]:
    """`count` paraphrases of each text by `model`, asking only for those the store lacks.
    Returns (check text -> paraphrases in index order, number of calls made)."""
    texts = list(dict.fromkeys(check_texts))
    missing = [(text, i) for text in texts for i in range(count) if store.get(text, model, i) is None]
    if missing:
        run_sync(_generate(model, missing, count, store))
    result = {}
    for text in texts:
        found = [store.get(text, model, i) for i in range(count)]
        result[text] = [p.text for p in found if p is not None]
    return result, len(missing)
