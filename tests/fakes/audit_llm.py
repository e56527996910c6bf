"""The fake provider, taught the audit and repair prompts (a sibling of tests/fakes/llm.py).

Deterministic answers from the request:
- structure: a check containing " and " is not atomic; one containing "appropriate" is not
  operational, nor scoped; the rest hold.
- grounding: a check is grounded when its last word occurs in the task (the quote is that word).
- a model whose name contains "contrarian" flips every structure and grounding answer.
- repair: the candidates listed in `repairs[check text]` (each {"operator", "checks"}).
- attack: writes the output listed in `attacks[check text]` (default: the check's keyword alone).
- verify: says an output meets the check only if it also contains "genuine".
- anything else is a verdict prompt, answered by the base fake (keyword in output).
"""

from __future__ import annotations

import json
import re
import threading
from dataclasses import dataclass, field
from typing import Any

from tests.fakes.llm import FakeLLM, keyword

TASK = re.compile(r"<task>\n(.*?)\n</task>", re.DOTALL)
CHECK = re.compile(r"<check>\n(.*?)\n</check>", re.DOTALL)
PROPERTIES = ("atomic", "consistent", "observable", "operational", "scoped")


def _yes(flag: bool) -> str:
    return "yes" if flag else "no"


@dataclass
class FakeAuditLLM(FakeLLM):
    repairs: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    attacks: dict[str, str] = field(default_factory=dict)
    kinds: list[str] = field(default_factory=list)  # kind of each answered request, in order
    bad_grounding_quote: bool = False
    structure_reason: str | None = None  # one reason for every property (SmolLM2's "..."), else one each

    local: threading.local = field(default_factory=threading.local)  # the request's model, per server thread

    def handle(self, handler: Any, body: dict[str, Any]) -> None:
        self.local.model = body.get("model", "")
        super().handle(handler, body)

    def _answer_text(self, prompt: str, behaviour: str, model: str = "m") -> str:
        if behaviour != "ok":
            return super()._answer_text(prompt, behaviour, model)
        contrarian = "contrarian" in getattr(self.local, "model", "")
        check_match = CHECK.search(prompt)
        check = check_match.group(1) if check_match else ""
        if "how a single check of a grading checklist is written" in prompt:
            self.kinds.append("structure")
            holds = {
                "atomic": " and " not in check,
                "consistent": True,
                "observable": True,
                "operational": "appropriate" not in check,
                "scoped": "appropriate" not in check,
            }
            reason = self.structure_reason
            return json.dumps({name: {"answer": _yes(holds[name] != contrarian),
                                      "reason": f"fake reason for {name}" if reason is None else reason}
                               for name in PROPERTIES})
        if "stays within what the task asks for" in prompt:
            self.kinds.append("grounding")
            task = TASK.search(prompt).group(1)  # type: ignore[union-attr]
            word = keyword(check)
            beyond = (word not in task.lower()) != contrarian
            quote = "not in either text" if self.bad_grounding_quote else (check.split()[-1] if beyond else word)
            if not beyond and word not in task.lower():
                quote = task.split()[0]  # a contrarian "grounded" answer still quotes the task
            return json.dumps({"beyond_task": _yes(beyond), "quote": quote, "reason": "fake grounding"})
        if "<failed_correct>" in prompt or "Rewrite operators" in prompt:
            self.kinds.append("repair")
            return json.dumps({"candidates": self.repairs.get(check, [])})
        if "<attack_brief>" in prompt:
            self.kinds.append("attack")
            return json.dumps({"output": self.attacks.get(check, keyword(check))})
        if "<claimed_output>" in prompt:
            self.kinds.append("verify")
            output = re.search(r"<output>\n(.*?)\n</output>", prompt, re.DOTALL).group(1)  # type: ignore[union-attr]
            meets = "genuine" in output
            return json.dumps({"meets_check": _yes(meets), "reason": "fake verifier"})
        self.kinds.append("verdict")
        return super()._answer_text(prompt, behaviour, model)
