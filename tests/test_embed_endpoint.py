"""The embeddings endpoint client (retrieval/dense/endpoint.py) against a
real OpenAI-compatible server on loopback computing vectors with a real
small model (tests/support/embed_server.py), and its failure modes: each is
counted in attempts and requests, never timed."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

from support.embed_server import DIMENSIONS, MODEL, EmbedServer, embed_texts

pytest.importorskip("static_model", reason="tokenlearn-static-model (the test extra, Linux x86-64) is not installed")

from rag_corpus_check.retrieval.dense import Endpoint
from rag_corpus_check.retrieval.dense.endpoint import ATTEMPTS, Client, EndpointError, url_problem

KEY = "sk-test-0123456789abcdef"
TEXTS = ["Deleted backups are kept for 30 days.", "How do I reset my password?", "Invoices are sent monthly."]


def _todo(texts: list[str]) -> dict[bytes, str]:
    return {hashlib.sha256(t.encode()).digest(): t for t in texts}


def _client(url: str, waits: list[float] | None = None, **endpoint) -> Client:
    sleeps = waits if waits is not None else []
    return Client(Endpoint(url, "EMBEDDING_API_KEY", **endpoint), KEY, MODEL, DIMENSIONS, sleep=sleeps.append)


def test_vectors_are_the_models_batched_and_the_key_is_sent_as_a_bearer():
    with EmbedServer() as server:
        client = _client(server.url, batch=2)
        got = client.embed(_todo(TEXTS))
    expected = np.asarray(embed_texts(TEXTS), dtype=np.float32)
    assert np.array_equal(np.stack(list(got.values())), expected)
    assert server.seen.requests == 2 and server.seen.texts == TEXTS  # batches of 2: 2 requests
    assert server.seen.keys == [f"Bearer {KEY}"] * 2 and server.seen.models == [MODEL] * 2
    assert client.stats() == {"host": "127.0.0.1", "texts": 3, "tokens": 17, "requests": 2}


def test_a_text_is_embedded_once_per_client():
    with EmbedServer() as server:
        client = _client(server.url)
        client.embed(_todo(TEXTS))
        client.embed(_todo(TEXTS[:2]))
    assert server.seen.requests == 1 and client.texts == 3


@pytest.mark.parametrize("code", ["429", "500"])
def test_429_and_5xx_are_retried_with_backoff(code):
    waits: list[float] = []
    with EmbedServer(code, fail=2) as server:
        got = _client(server.url, waits).embed(_todo(TEXTS))
    assert len(got) == 3 and server.seen.requests == 3
    assert waits == [1.0, 2.0]  # doubled each time


def test_an_endpoint_that_keeps_failing_is_an_error_naming_the_host_after_the_attempts():
    waits: list[float] = []
    with EmbedServer("500") as server:
        with pytest.raises(EndpointError) as caught:
            _client(server.url, waits).embed(_todo(TEXTS))
    assert server.seen.requests == ATTEMPTS and waits == [1.0, 2.0, 4.0]
    assert caught.value.kind == "embedding"
    assert "the embedding endpoint 127.0.0.1 failed: HTTP 500, 4 attempts" in caught.value.message
    assert KEY not in caught.value.message


def test_a_timeout_is_retried_then_an_error():
    with EmbedServer("slow", delay=2.0) as server:
        with pytest.raises(EndpointError) as caught:
            _client(server.url, timeout=0.2).embed(_todo(TEXTS))
    assert server.seen.requests == ATTEMPTS
    assert "no answer within 0.2 s, 4 attempts" in caught.value.message


@pytest.mark.parametrize(("mode", "words"), [
    ("count", "it answered 2 vectors for 3 texts"),
    ("dims", "it answered a vector of 63 numbers, but the store's vectors have 64 dimensions"),
    ("nan", "its answer is not JSON (NaN and Infinity are refused)"),
])
def test_a_wrong_answer_is_an_error_without_a_retry(mode, words):
    with EmbedServer(mode) as server:
        with pytest.raises(EndpointError) as caught:
            _client(server.url).embed(_todo(TEXTS))
    assert server.seen.requests == 1 and words in caught.value.message, caught.value.message
    assert caught.value.kind == "embedding"


def test_a_redirect_to_another_host_is_never_followed():
    with EmbedServer() as other, EmbedServer("redirect", location="") as server:
        server.location = other.url.replace("127.0.0.1", "localhost")
        with pytest.raises(EndpointError) as caught:
            _client(server.url).embed(_todo(TEXTS))
    assert other.seen.requests == 0 and server.seen.requests == 1
    assert "it answered with a redirect (HTTP 307), which is never followed" in caught.value.message


def test_the_text_and_token_limits_are_limit_problems():
    with EmbedServer() as server:
        with pytest.raises(EndpointError) as caught:
            _client(server.url, max_texts=2).embed(_todo(TEXTS))
        assert server.seen.requests == 0  # refused before anything is sent
        assert caught.value.kind == "limit" and "over `retriever.endpoint.max_texts` (2)" in caught.value.message
        with pytest.raises(EndpointError) as caught:
            _client(server.url, batch=1, max_tokens=10).embed(_todo(TEXTS))
        assert server.seen.requests == 2  # 7 tokens, then 13: stopped after the second batch
        assert caught.value.kind == "limit" and "took 13 tokens" in caught.value.message


@pytest.mark.parametrize(("url", "ok"), [
    ("https://api.example.com/v1/embeddings", True),
    ("http://127.0.0.1:8080/v1/embeddings", True),
    ("http://localhost/v1/embeddings", True),
    ("http://[::1]:9/v1/embeddings", True),
    ("http://api.example.com/v1/embeddings", False),
    ("http://127.0.0.1.evil.example/v1", False),
    ("https://user:pw@api.example.com/", False),
    ("ftp://api.example.com/", False),
])
def test_only_https_or_loopback_http(url, ok):
    assert (url_problem(url) is None) is ok
