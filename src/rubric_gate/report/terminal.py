"""Keep user text inert on a terminal: no escape sequences or other control characters."""

from __future__ import annotations

import re

# C0 controls but tab and newline, DEL, and C1 controls (CSI, OSC ... as single bytes).
_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def strip_controls(text: str) -> str:
    """`text` with control characters replaced by U+FFFD, so an ESC cannot start a sequence."""
    return _CONTROLS.sub("\ufffd", text)
