"""Keep user text inert on a terminal: no escape sequences or other control characters."""

from __future__ import annotations

import re

# C0 controls but tab and newline, DEL, C1 controls (CSI, OSC ... as single bytes), and the
# bidirectional controls, which reorder what follows them (U+202E shows "txt.exe" as "exe.txt").
_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def strip_controls(text: str) -> str:
    """`text` with control and bidirectional-control characters replaced by U+FFFD, so an ESC cannot start a sequence."""
    return _CONTROLS.sub("\ufffd", text)
