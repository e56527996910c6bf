"""The fake batch endpoints list as the providers do: newest first, `limit` pages, a cursor
(`after` for OpenAI, `after_id`/`before_id` for Anthropic), `has_more` and `last_id`. The real
SDKs walk every page once, at any supported release (openai before 1.66 follows the last id
until a page comes back empty, so a fake that ignores the cursor makes it page forever)."""

from __future__ import annotations

from collections.abc import Iterator

import anthropic
import openai
import pytest

from tests.fakes.batches import FakeBatches

COUNT = 45


@pytest.fixture
def listing() -> Iterator[FakeBatches]:
    fake = FakeBatches().start()
    for n in range(COUNT):
        fake._new_batch("openai" if n % 2 == 0 else "anthropic", [])
        fake._new_batch("anthropic" if n % 2 == 0 else "openai", [])
    yield fake
    fake.stop()


def _newest_first(fake: FakeBatches, provider: str) -> list[str]:
    return [b.id for b in reversed(list(fake.batches.values())) if b.provider == provider]


@pytest.mark.timeout(30)
def test_the_openai_sdk_walks_every_page_once(listing: FakeBatches) -> None:
    client = openai.OpenAI(base_url=listing.openai_url, api_key="test", max_retries=0)
    seen = [batch.id for batch in client.batches.list(limit=10)]
    assert seen == _newest_first(listing, "openai") and len(seen) == COUNT
    # 5 pages, and one empty page more for a client that ignores has_more
    assert listing.hits["GET /v1/batches"] in (5, 6)


@pytest.mark.timeout(30)
def test_the_anthropic_sdk_walks_every_page_once(listing: FakeBatches) -> None:
    client = anthropic.Anthropic(base_url=listing.anthropic_url, api_key="test", max_retries=0)
    seen = [batch.id for batch in client.messages.batches.list(limit=10)]
    assert seen == _newest_first(listing, "anthropic") and len(seen) == COUNT
    assert listing.hits["GET /v1/messages/batches"] == 5


def test_a_page_says_whether_more_follow_and_where_it_ends(listing: FakeBatches) -> None:
    ids = _newest_first(listing, "openai")
    first = listing.list_batches("openai", {"limit": ["20"]})
    assert [b["id"] for b in first["data"]] == ids[:20] and first["has_more"] is True
    assert first["first_id"] == ids[0] and first["last_id"] == ids[19] and first["object"] == "list"
    last = listing.list_batches("openai", {"limit": ["20"], "after": [ids[39]]})
    assert [b["id"] for b in last["data"]] == ids[40:] and last["has_more"] is False
    assert listing.list_batches("openai", {"after": [ids[-1]]}) == {
        "object": "list", "data": [], "has_more": False, "first_id": None, "last_id": None}
    assert len(listing.list_batches("openai")["data"]) == 20  # the default limit
    assert len(listing.list_batches("openai", {"limit": ["1000"]})["data"]) == COUNT  # at most 100


def test_anthropic_pages_back_with_before_id(listing: FakeBatches) -> None:
    ids = _newest_first(listing, "anthropic")
    page = listing.list_batches("anthropic", {"limit": ["10"], "before_id": [ids[25]]})
    assert [b["id"] for b in page["data"]] == ids[15:25] and page["has_more"] is True
    page = listing.list_batches("anthropic", {"limit": ["10"], "before_id": [ids[5]]})
    assert [b["id"] for b in page["data"]] == ids[:5] and page["has_more"] is False
