"""The fake provider taught the teach and discover prompts (a sibling of tests/audit/fake_audit_llm.py).

Deterministic answers from the request:
- verdicts: a check text listed in `truth` answers "no" exactly on the outputs listed for it
  (a judge that agrees with the labels); other texts fall back to the base fake (keyword rule).
- teach: writes `teach[flaw]` for the group whose labelled category the prompt names.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from tests.audit.fake_audit_llm import FakeAuditLLM

FLAW = re.compile(r"\(the labellers' category: (.*?)\)")


@dataclass
class FakeDiscoverLLM(FakeAuditLLM):
    truth: dict[str, set[str]] = field(default_factory=dict)  # check text -> outputs answered "no"
    teach: dict[str, str] = field(default_factory=dict)  # flaw -> check text the teacher writes

    def _decide(self, check: str, output: str, model: str) -> dict[str, str]:
        if check in self.truth:
            return {"answer": "no" if output in self.truth[check] else "yes", "quote": ""}
        return super()._decide(check, output, model)

    def _answer_text(self, prompt: str, behaviour: str, model: str = "m") -> str:
        if behaviour == "ok" and "<missed_flawed>" in prompt:
            self.kinds.append("teach")
            match = FLAW.search(prompt)
            flaw = match.group(1) if match else ""
            return json.dumps({"text": self.teach.get(flaw, f"The output avoids the {flaw} flaw"),
                               "why": f"fake teacher for {flaw}"})
        return super()._answer_text(prompt, behaviour, model)

    def handle(self, handler: Any, body: dict[str, Any]) -> None:
        super().handle(handler, body)
