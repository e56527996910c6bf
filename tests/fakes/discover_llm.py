"""The fake provider taught the teach and discover prompts (a sibling of tests/fakes/audit_llm.py).

Deterministic answers from the request:
- verdicts: a check text listed in `truth` answers "no" exactly on the outputs listed for it
  (a judge that agrees with the labels); other texts fall back to the base fake (keyword rule:
  "yes" when the check's last word occurs in the output).
- teach: writes `teach[flaw]` for the group whose labelled category the prompt names.
- extract: one criterion "The response <verb> <word>" per word of VOCAB in either response
  (words in one response only first), 5-7 of them; the verb varies by pair, so consolidation
  has rewordings to merge.
- merge: groups the listed criteria by their last word, one "The response mentions <word>" each.
- pairwise preference: with checks listed, the response meeting more of them (ties: A); without,
  the longer response (ties: A).
- applicability: a check applies when its last word occurs in the prompt.
- POST /v1/embeddings: like the real API (a list of embedding objects with index, usage; base64
  when asked): a hashed bag of words, so texts sharing words are close.
"""

from __future__ import annotations

import base64
import json
import re
import zlib
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from tests.fakes.audit_llm import FakeAuditLLM
from tests.fakes.llm import CHECKLIST, keyword

FLAW = re.compile(r"\(the labellers' category: (.*?)\)")
RESPONSE = re.compile(r'<response id="(preferred|other)">\n(.*?)\n</response>', re.DOTALL)
PAIRWISE = re.compile(r'<response id="(A|B)">\n(.*?)\n</response>', re.DOTALL)
CRITERION = re.compile(r'<criterion id="(c\d+)">\n(.*?)\n</criterion>', re.DOTALL)
VOCAB = ["apple", "pear", "plum", "fig", "kiwi", "lime", "date"]
VERBS = ["mentions", "names", "refers to"]
DIMENSIONS = 32


def bag_of_words(text: str) -> list[float]:
    """Hashed word counts, the last word (a check's keyword) weighted 4x: texts about one fruit are close."""
    vector = np.zeros(DIMENSIONS)
    words = re.findall(r"[a-z]+", text.lower())
    for index, word in enumerate(words):
        vector[zlib.crc32(word.encode()) % DIMENSIONS] += 4.0 if index == len(words) - 1 else 1.0
    return vector.tolist()


@dataclass
class FakeDiscoverLLM(FakeAuditLLM):
    truth: dict[str, set[str]] = field(default_factory=dict)  # check text -> outputs answered "no"
    teach: dict[str, str] = field(default_factory=dict)  # flaw -> check text the teacher writes
    embedding_bodies: list[dict[str, Any]] = field(default_factory=list)
    embeddings_served: bool = True  # False: answer /embeddings as llama-server without --embeddings does

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
        if behaviour == "ok" and '<response id="A">' in prompt:
            self.kinds.append("prefer")
            return json.dumps({"better": self._prefer(prompt)})
        if behaviour == "ok" and "which checks of a grading checklist are relevant" in prompt:
            self.kinds.append("applies")
            asked = re.search(r"<prompt>\n(.*?)\n</prompt>", prompt, re.DOTALL).group(1).lower()  # type: ignore[union-attr]
            return json.dumps({"answers": [{"id": cid, "applies": "yes" if keyword(text) in asked else "no"}
                                           for cid, text in CHECKLIST.findall(prompt)]})
        if behaviour == "ok" and '<response id="preferred">' in prompt:
            self.kinds.append("extract")
            return json.dumps({"criteria": self._extract(prompt)})
        if behaviour == "ok" and "<criterion id=" in prompt:
            self.kinds.append("merge")
            return json.dumps(self._merge(prompt))
        return super()._answer_text(prompt, behaviour, model)

    def _extract(self, prompt: str) -> list[dict[str, Any]]:
        responses = dict(RESPONSE.findall(prompt))
        chosen, other = responses["preferred"].lower(), responses["other"].lower()
        verb = VERBS[zlib.crc32(chosen.encode()) % len(VERBS)]
        one_side = [w for w in VOCAB if (w in chosen) != (w in other)]
        both = [w for w in VOCAB if w in chosen and w in other]
        neither = [w for w in VOCAB if w not in chosen and w not in other]
        words = (one_side + both + neither)[: max(5, min(7, len(one_side) + len(both)))]
        return [{"name": f"{w} {verb}", "check": f"The response {verb} {w}",
                 "preferred_score": 8 if w in chosen else 2, "other_score": 8 if w in other else 2} for w in words]

    def _prefer(self, prompt: str) -> str:
        """With checks listed: the response meeting more of them (keyword rule); without: the longer one."""
        sides = dict(PAIRWISE.findall(prompt))
        a, b = sides["A"], sides["B"]
        listed = re.search(r"<checks>\n(.*?)</checks>", prompt, re.DOTALL)
        if listed:
            words = [keyword(line) for line in listed.group(1).splitlines() if line.strip()]
            score_a, score_b = (sum(w in side.lower() for w in words) for side in (a, b))
        else:
            score_a, score_b = len(a), len(b)
        return "B" if score_b > score_a else "A"

    def _merge(self, prompt: str) -> dict[str, Any]:
        """Criteria grouped by keyword: one assignment each, one check per group of two or more."""
        by_word: dict[str, list[str]] = {}
        for cid, text in CRITERION.findall(prompt):
            by_word.setdefault(keyword(text), []).append(cid)
        return {"assignments": [{"id": cid, "group": f"mentions {w}"} for w, ids in by_word.items() for cid in ids],
                "groups": [{"group": f"mentions {w}", "check": f"The response mentions {w}"}
                           for w, ids in by_word.items() if len(ids) >= 2]}

    def handle(self, handler: Any, body: dict[str, Any]) -> None:
        if not handler.path.endswith("/embeddings"):
            super().handle(handler, body)
            return
        with self.lock:
            self.received += 1
            self.embedding_bodies.append(body)
        if not self.embeddings_served:  # llama-server b1-0c1e570's reply, byte for byte
            self._send(handler, 501, {"error": {"code": 501, "message": "This server does not support embeddings. "
                                                "Start it with `--embeddings`", "type": "not_supported_error"}})
            return
        inputs = body["input"] if isinstance(body["input"], list) else [body["input"]]
        data = []
        for index, text in enumerate(inputs):
            vector = bag_of_words(text)
            if body.get("encoding_format") == "base64":
                encoded: Any = base64.b64encode(np.array(vector, dtype="<f4").tobytes()).decode()
            else:
                encoded = vector
            data.append({"object": "embedding", "index": index, "embedding": encoded})
        tokens = sum(len(t.split()) for t in inputs)
        self._send(handler, 200, {"object": "list", "data": data, "model": body["model"],
                                  "usage": {"prompt_tokens": tokens, "total_tokens": tokens}})
