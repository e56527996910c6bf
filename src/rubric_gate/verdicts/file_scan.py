"""Streaming a verdict file from a byte offset into the parser: whole lines in blocks, the bytes
up to the last newline hashed (sha256) as they pass, for the index to know them again."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from typing import BinaryIO

from rubric_gate.verdicts.parse import BOM, CHUNK, RowBuilder, parse_blocks


class FileScan:
    """Stream a file from `start`, hashing the bytes up to the last newline as it goes."""

    def __init__(self, handle: BinaryIO, start: int) -> None:
        self.handle = handle
        self.start = start
        self.complete_end = start  # end of the last newline-terminated line seen
        self.complete_lines = 0  # lines up to complete_end (once parsed)
        self.digest = hashlib.sha256()
        self.unterminated = False

    def parse(self, builder: RowBuilder, display: str, first_line: int) -> None:
        """Parse every block into `builder`, counting the complete lines."""
        seen = parse_blocks(self.blocks(), builder, display, first_line)
        self.complete_lines = seen - (1 if self.unterminated else 0)

    def blocks(self) -> Iterable[tuple[bytes, int, bool]]:
        handle = self.handle
        handle.seek(self.start)
        carry = b""
        offset = self.start
        first = self.start == 0
        while True:
            chunk = handle.read(CHUNK)
            if not chunk:
                break
            if first:
                first = False
                if chunk.startswith(BOM):  # a BOM is not part of the first line
                    self.digest.update(BOM)
                    chunk = chunk[len(BOM):]
                    offset += len(BOM)
                    self.complete_end = offset
            cut = chunk.rfind(b"\n")
            if cut < 0:
                carry += chunk
                continue
            # One copy of the bytes into the block (a slice then a concatenation would be two).
            block = b"".join((carry, memoryview(chunk)[: cut + 1])) if carry else chunk[: cut + 1]
            carry = chunk[cut + 1:]
            self.digest.update(block)
            yield block, offset, False
            offset += len(block)
            self.complete_end = offset
        if carry:
            self.unterminated = True
            yield carry, offset, True
