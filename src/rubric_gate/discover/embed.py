"""Embeddings for consolidation: the provider's embeddings API when the judge is OpenAI (or a
compatible server), else a local model-free fallback (TF-IDF, scikit-learn). Vectors are
L2-normalised, so a dot product is the cosine similarity.

Provider vectors are model answers: each is stored in the answer store by text and reused,
so a rerun makes no call. TF-IDF needs no store: it is a pure function of the texts.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, cast

import numpy as np

from rubric_gate.audit.store import AuditStore
from rubric_gate.llm.asks import Ask, CallStats, raise_failures, run_asks
from rubric_gate.llm.errors import MalformedReply, classify
from rubric_gate.llm.protocols import JudgeRequest, Reply
from rubric_gate.llm.spec import parse_judge_spec

KIND = "embed"
DEFAULT_EMBEDDING_MODEL = "text-embedding-3-small"
BATCH = 256  # inputs per request (the API takes up to 2048)
TFIDF = "tfidf"


def normalise(vectors: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors / np.where(norms == 0, 1.0, norms)


def tfidf_vectors(texts: Sequence[str]) -> np.ndarray:
    from sklearn.feature_extraction.text import TfidfVectorizer

    if not texts:
        return np.zeros((0, 0))
    try:
        matrix = TfidfVectorizer(stop_words="english", sublinear_tf=True).fit_transform(list(texts))
    except ValueError:  # nothing but stop words: compare character n-grams instead
        matrix = TfidfVectorizer(analyzer="char_wb", ngram_range=(3, 5)).fit_transform(list(texts))
    return normalise(matrix.toarray())


def _decode(item: Any) -> list[float]:
    vector = item.embedding
    if isinstance(vector, str):  # encoding_format=base64: little-endian float32
        return cast(list[float], np.frombuffer(base64.b64decode(vector), dtype="<f4").astype(float).tolist())
    return [float(x) for x in vector]


@dataclass
class Embedder:
    """`provider:model` for the API, or TFIDF; `describe` says which, for the report."""

    source: str
    store: AuditStore | None = None
    concurrency: int = 8
    max_calls: int | None = None
    notice: str = ""  # why `auto` chose what it chose, when the user may have expected otherwise

    @property
    def describe(self) -> str:
        if self.source == TFIDF:
            return "tfidf (local, scikit-learn; no model)"
        return f"{self.source} (provider embeddings API)"

    def vectors(self, texts: Sequence[str], usage: list[CallStats]) -> np.ndarray:
        if self.source == TFIDF:
            return tfidf_vectors(texts)
        assert self.store is not None
        model = parse_judge_spec(self.source).model
        wanted = list(dict.fromkeys(texts))
        missing = [t for t in wanted if self.store.find(KIND, self.source, model, t, "") is None]
        stats = CallStats(self.source, "embed", reused=len(wanted) - len(missing))
        asks = [self._ask(missing[i:i + BATCH], model) for i in range(0, len(missing), BATCH)]
        run_asks(asks, self.source, stats, concurrency=self.concurrency, max_calls=self.max_calls)
        usage.append(stats)
        raise_failures([stats])
        rows = []
        for text in texts:
            record = self.store.find(KIND, self.source, model, text, "")
            assert record is not None
            rows.append(record.result["vector"])
        return normalise(np.array(rows, dtype=float))

    def _ask(self, batch: list[str], model: str) -> Ask:
        store, source = self.store, self.source
        assert store is not None

        async def send(backend: Any) -> Reply:
            import openai

            try:
                response = await backend.client.embeddings.create(model=model, input=batch)
            except openai.APIError as exc:
                raise classify(exc, "openai") from None
            tokens = response.usage.prompt_tokens if response.usage else 0
            ordered = sorted(response.data, key=lambda d: d.index)
            return Reply(json.dumps([_decode(d) for d in ordered]), tokens, 0)

        def parse(text: str) -> list[list[float]]:
            vectors = json.loads(text)
            if len(vectors) != len(batch) or len({len(v) for v in vectors}) != 1 or not vectors[0]:
                raise MalformedReply(f"expected {len(batch)} vectors of one length")
            return cast(list[list[float]], vectors)

        def done(vectors: list[list[float]], tin: int, _tout: int) -> None:
            for i, (text, vector) in enumerate(zip(batch, vectors, strict=True)):
                store.record(KIND, source, model, text, "", {"vector": vector}, tin if i == 0 else 0, 0)

        request = JudgeRequest("\n".join(batch), {}, "embeddings", 0)  # shown in dry runs only
        return Ask(f"embeddings of {len(batch)} texts", request, parse, done, send=send)


def choose_embedder(choice: str, judge: str, store: AuditStore, embedding_model: str | None = None,
                    *, concurrency: int = 8, max_calls: int | None = None) -> Embedder:
    """auto: the provider API when the judge is OpenAI itself (or a compatible server and an
    `embedding_model` named), else TF-IDF. A compatible server behind OPENAI_BASE_URL (llama.cpp,
    Ollama, vLLM) rarely serves OpenAI's embeddings model, and llama-server serves none unless
    started with --embeddings: auto does not guess that it does, and says so in a notice."""
    import os

    from rubric_gate.llm.providers.openai import is_compatible_server

    provider = parse_judge_spec(judge).provider
    if choice == TFIDF or (choice == "auto" and provider != "openai"):
        return Embedder(TFIDF)
    base_url = os.environ.get("OPENAI_BASE_URL")
    if choice == "auto" and embedding_model is None and is_compatible_server(base_url):
        return Embedder(TFIDF, notice=(
            f"embeddings: local TF-IDF, not the embeddings API of the server at OPENAI_BASE_URL ({base_url}); "
            "pass --embeddings provider --embedding-model NAME to use the server's embeddings"))
    if provider != "openai":
        from rubric_gate.errors import JudgeError

        raise JudgeError(f"--embeddings provider needs an OpenAI (or compatible) judge, not {judge}; "
                         "use --embeddings tfidf")
    return Embedder(f"openai:{embedding_model or DEFAULT_EMBEDDING_MODEL}", store, concurrency, max_calls)
