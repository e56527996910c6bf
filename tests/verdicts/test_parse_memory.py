"""The parser holds one block at a time: what a parse allocates beyond the columns it keeps is
bounded by the block size, not by the store's size (a 255 MiB store parsed in 4 MiB blocks,
all cut up front, held a copy of itself and left ~60 MiB resident)."""

from __future__ import annotations

import tracemalloc

from rubric_gate.verdicts import VerdictStore


def _store_bytes(lines: int) -> bytes:
    return "".join(f'{{"item": "item-{i // 40:06d}", "check": "c{i % 40}", "check_text": "The report covers '
                   f'topic {i % 40}: it names the affected resource.", "answer": "{"no" if i % 7 else "yes"}", '
                   '"judge": "hand"}\n' for i in range(lines)).encode()


def test_a_parse_holds_one_block_of_rows_at_a_time() -> None:
    raw = _store_bytes(20_000)  # ~3 MiB: a dozen blocks
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        store = VerdictStore.from_bytes(raw, "v.jsonl")
        peak = tracemalloc.get_traced_memory()[1] - before
    finally:
        tracemalloc.stop()
    assert len(store) == 20_000
    # The kept columns are ~29 bytes a row (0.6 MiB here), a block's decoded rows ~5x its bytes,
    # the fast path's first import ~1 MiB: 3 MiB in all (15 MiB with the store in one block).
    assert peak < len(raw) * 2, f"parsing {len(raw) / 2**20:.1f} MiB peaked at {peak / 2**20:.1f} MiB"
