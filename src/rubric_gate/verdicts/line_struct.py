"""The verdict parser's fast path: a msgspec struct derived from the `Verdict` model (the same
keys, types and bounds, nothing coerced) and its decoder. Its own module so that a process that
reads only indexed stores never imports msgspec."""

from __future__ import annotations

import typing
from operator import attrgetter
from typing import Annotated, Any

import msgspec

from rubric_gate.verdicts.model import Verdict

UNSET = msgspec.UNSET
SAMPLE_MAX = 2**31 - 1  # the sample column is int32; a larger index takes the exact path


def _optional_text(info: Any) -> bool:
    return set(typing.get_args(info.annotation)) == {str, type(None)} and not info.metadata


# Every optional text field of the model (judge, prompt, item_hash, check, quote, at, batch, and
# any added later) is validated on the fast path the same way; the columns keep those in KEYED.
OPTIONAL_TEXT = tuple(name for name, info in Verdict.model_fields.items() if _optional_text(info))
# The optional texts that go into columns: the item hash, and the fields that make up a row's
# source (who judged it, reading what): one source id per distinct tuple.
SOURCE_FIELDS = tuple(name for name in ("judge", "prompt", "task_hash") if name in OPTIONAL_TEXT)
KEYED = ("item_hash", *SOURCE_FIELDS)


# gc=False: a row holds strings and numbers only (no cycle), so the collector need not track the
# million rows a large store decodes into.
class _Usage(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    input_tokens: Annotated[int, msgspec.Meta(ge=0)] | msgspec.UnsetType = UNSET
    output_tokens: Annotated[int, msgspec.Meta(ge=0)] | msgspec.UnsetType = UNSET


def _line_struct() -> type | None:
    """The fast path's struct: one field per model field. Absent optional fields stay UNSET (so
    re-encoding a row writes exactly the keys its line had); null is left to the exact path."""
    fields: list[tuple[str, Any] | tuple[str, Any, Any]] = []
    for name, info in Verdict.model_fields.items():
        if name in ("item", "check_text"):
            fields.append((name, Annotated[str, msgspec.Meta(min_length=1)]))
        elif name == "answer":
            fields.append((name, info.annotation))
        elif name == "usage":
            fields.append((name, _Usage | msgspec.UnsetType, UNSET))
        elif name == "sample":
            fields.append((name, Annotated[int, msgspec.Meta(ge=0, le=SAMPLE_MAX)] | msgspec.UnsetType, UNSET))
        elif name in OPTIONAL_TEXT:
            fields.append((name, str | msgspec.UnsetType, UNSET))
        else:  # a field this path does not know: a line holding it takes the exact path
            fields.append((name, msgspec.UnsetType, UNSET))
    return msgspec.defstruct("VerdictLine", fields, forbid_unknown_fields=True, gc=False)


LINE = _line_struct()
_DECODER = msgspec.json.Decoder(LINE)
decode_line = _DECODER.decode
decode_lines = _DECODER.decode_lines  # every value of a buffer, one or more per line (whitespace between)
encode = msgspec.json.Encoder().encode
DECODE_ERRORS = (msgspec.DecodeError, msgspec.ValidationError)
COLUMN_FIELDS = ("check_text", "item", "answer", "item_hash", "sample")  # then SOURCE_FIELDS
GETTER = {name: attrgetter(name) for name in (*COLUMN_FIELDS, *SOURCE_FIELDS)}
# A row's source as a tuple, as the columns key it (one field: attrgetter would give it bare).
SOURCE = attrgetter(*SOURCE_FIELDS) if len(SOURCE_FIELDS) > 1 else lambda row: (getattr(row, SOURCE_FIELDS[0]),)
