"""Texts embedded in the job through an OpenAI-compatible embeddings
endpoint (``retriever.endpoint: {url, key_env}``), standard library only.

The endpoint comes from a trusted config (the base's, with a base revision)
and so does the name of the variable holding the key; the key is sent as
``Authorization: Bearer`` to that URL and nowhere else: HTTPS only (plain
HTTP to a loopback address, for a local server), no redirect followed, no
proxy for a loopback address. Nothing this module raises or returns holds
the key, a text or the endpoint's answer: messages name the host.

A request is ``POST {"model", "input": [texts]}``; the answer must be
``{"data": [{"index": i, "embedding": [numbers]}], "usage": {"total_tokens"}}``
with one finite, non-zero vector of the store's dimensions per text, else
the check stops (:class:`EndpointError`, exit 3). Bounded: at most
``batch`` texts a request, ``max_texts`` texts and ``max_tokens`` tokens a
run (over either: a ``limit`` problem, exit 2), ``timeout`` seconds a
request, :data:`ATTEMPTS` attempts on 429, 5xx, a timeout or a lost
connection, waiting :data:`BACKOFF` seconds doubled each time (a
``Retry-After`` of at most :data:`MAX_RETRY_AFTER` seconds is honoured).
"""

from __future__ import annotations

import json
import math
import socket
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from http.client import HTTPException
from urllib.parse import urlsplit

import numpy as np

from rag_corpus_check.retrieval.dense import Endpoint, EndpointError, loopback, url_problem

ATTEMPTS = 4
BACKOFF = 1.0
MAX_RETRY_AFTER = 30.0
ANSWER_SLACK = 64 * 1024  # bytes of an answer besides its numbers
BYTES_PER_NUMBER = 40


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, req, fp, code, msg, headers, newurl):
        raise urllib.error.HTTPError(req.full_url, code, "redirect refused", headers, fp)


def _opener(url: str) -> urllib.request.OpenerDirector:
    handlers: list = [_NoRedirect()]
    if loopback(urlsplit(url).hostname or ""):
        handlers.append(urllib.request.ProxyHandler({}))
    return urllib.request.build_opener(*handlers)


@dataclass
class Client:
    """One check's client of one endpoint: every vector it got, by text
    sha-256 (a text both sides need is embedded once), and what it cost."""

    endpoint: Endpoint
    key: str
    model: str
    dimensions: int
    sleep: Callable[[float], None] | None = None  # how to wait before a retry (None: time.sleep)
    got: dict[bytes, np.ndarray] = field(default_factory=dict)
    texts: int = 0
    tokens: int = 0
    requests: int = 0  # HTTP requests sent, retries included
    _wait: float = field(default=BACKOFF, init=False, repr=False)  # before the next attempt

    def __post_init__(self) -> None:
        why = url_problem(self.endpoint.url)
        if why is not None:  # the schema refuses such a URL: a bug if one gets here
            raise EndpointError("embedding", f"the endpoint URL {why}")
        self._open = _opener(self.endpoint.url).open

    def stats(self) -> dict:
        return {"host": self.endpoint.host, "texts": self.texts, "tokens": self.tokens, "requests": self.requests}

    def embed(self, todo: dict[bytes, str]) -> dict[bytes, np.ndarray]:
        """The vectors of ``todo`` (text sha-256 -> text), float32."""
        new = [(d, t) for d, t in todo.items() if d not in self.got]
        if self.texts + len(new) > self.endpoint.max_texts:
            raise EndpointError("limit", f"{self.texts + len(new)} texts would be embedded through "
                                f"{self.endpoint.host} in this run, over `retriever.endpoint.max_texts` "
                                f"({self.endpoint.max_texts}); run `rag-corpus-check embed` on the default "
                                "branch to add them to the store, or raise the limit in the base's config")
        step = self.endpoint.batch
        for start in range(0, len(new), step):
            batch = new[start:start + step]
            vectors = self._batch([t for _, t in batch])
            self.got.update(zip([d for d, _ in batch], vectors, strict=True))
            self.texts += len(batch)
        return {d: self.got[d] for d in todo}

    def _batch(self, texts: list[str]) -> list[np.ndarray]:
        answer = self._post(json.dumps({"model": self.model, "input": texts}).encode("utf-8"), len(texts))
        vectors, tokens = self._vectors(answer, len(texts))
        self.tokens += tokens
        if self.tokens > self.endpoint.max_tokens:
            raise EndpointError("limit", f"the texts embedded through {self.endpoint.host} took {self.tokens} "
                                f"tokens, over `retriever.endpoint.max_tokens` ({self.endpoint.max_tokens}); run "
                                "`rag-corpus-check embed` on the default branch to add them to the store, or "
                                "raise the limit in the base's config")
        return vectors

    def _post(self, body: bytes, n: int) -> bytes:
        cap = n * self.dimensions * BYTES_PER_NUMBER + ANSWER_SLACK
        why = ""
        for attempt in range(ATTEMPTS):
            if attempt:
                (self.sleep or _pause)(self._wait)
            self.requests += 1
            self._wait = BACKOFF * 2 ** attempt
            try:
                return self._once(body, cap)
            except _Retry as exc:
                why = exc.why
        raise self._error(f"{why}, {ATTEMPTS} attempts")

    def _once(self, body: bytes, cap: int) -> bytes:
        request = urllib.request.Request(self.endpoint.url, data=body, method="POST", headers={
            "Content-Type": "application/json", "Accept": "application/json",
            "Authorization": f"Bearer {self.key}", "User-Agent": "rag-corpus-check"})
        try:
            with self._open(request, timeout=self.endpoint.timeout) as response:
                data = response.read(cap + 1)
        except urllib.error.HTTPError as exc:
            exc.close()
            self._status(exc.code, exc.headers)
            raise AssertionError("unreachable") from None
        except TimeoutError:
            raise _Retry(f"no answer within {self.endpoint.timeout:g} s") from None
        except (urllib.error.URLError, HTTPException, OSError) as exc:
            reason = getattr(exc, "reason", exc)
            if isinstance(reason, (TimeoutError, socket.timeout)):
                raise _Retry(f"no answer within {self.endpoint.timeout:g} s") from None
            raise _Retry(f"the connection failed ({type(reason).__name__})") from None
        if len(data) > cap:
            raise self._error(f"its answer is over {cap} bytes")
        return data

    def _status(self, code: int, headers) -> None:
        if code == 429 or 500 <= code < 600:
            self._wait = max(self._wait, _retry_after(headers))
            raise _Retry(f"HTTP {code}")
        if 300 <= code < 400:
            raise self._error(f"it answered with a redirect (HTTP {code}), which is never followed (the key goes "
                              "to the configured URL only); set `retriever.endpoint.url` to the final URL")
        if code in (401, 403):
            raise self._error(f"HTTP {code}: the key was refused; check the secret the job passes in "
                              f"${self.endpoint.key_env}")
        raise self._error(f"HTTP {code}")

    def _vectors(self, data: bytes, n: int) -> tuple[list[np.ndarray], int]:
        try:
            doc = json.loads(data, parse_constant=_refuse)
        except (ValueError, RecursionError):
            raise self._error("its answer is not JSON (NaN and Infinity are refused)") from None
        items = doc.get("data") if isinstance(doc, dict) else None
        if not isinstance(items, list) or len(items) != n:
            got = len(items) if isinstance(items, list) else "no"
            raise self._error(f"it answered {got} vectors for {n} texts")
        out: list[np.ndarray | None] = [None] * n
        for item in items:
            at = item.get("index") if isinstance(item, dict) else None
            if type(at) is not int or not 0 <= at < n or out[at] is not None:
                raise self._error("its answer's `index` values are not 0 … n-1, once each")
            out[at] = self._vector(item.get("embedding"))
        return [v for v in out if v is not None], _tokens(doc)

    def _vector(self, values) -> np.ndarray:
        if not (isinstance(values, list) and len(values) == self.dimensions
                and all(type(x) in (int, float) for x in values)):
            got = len(values) if isinstance(values, list) else "no"
            raise self._error(f"it answered a vector of {got} numbers, but the store's vectors have "
                              f"{self.dimensions} dimensions (`dimensions` in store.json: the model's)")
        if not all(math.isfinite(x) for x in values):
            raise self._error("it answered a vector with a NaN or infinite value")
        vector = np.asarray(values, dtype=np.float32)
        if not np.isfinite(vector).all() or not vector.any():
            raise self._error("it answered a vector that is all zeros, or overflows float32")
        return vector

    def _error(self, why: str) -> EndpointError:
        return EndpointError("embedding", f"the embedding endpoint {self.endpoint.host} failed: {why}; nothing "
                             "was measured — re-run the job, or check the endpoint (`retriever.endpoint` in the "
                             "base's config) and the model's dimensions")


def _pause(seconds: float) -> None:
    time.sleep(seconds)


class _Retry(Exception):
    def __init__(self, why: str):
        super().__init__(why)
        self.why = why


def _refuse(name: str):
    raise ValueError(name)


def _retry_after(headers) -> float:
    try:
        value = float(headers.get("Retry-After", "0")) if headers is not None else 0.0
    except (TypeError, ValueError):
        return 0.0
    return min(max(value, 0.0), MAX_RETRY_AFTER) if math.isfinite(value) else 0.0


def _tokens(doc: dict) -> int:
    usage = doc.get("usage")
    total = usage.get("total_tokens", usage.get("prompt_tokens")) if isinstance(usage, dict) else None
    return total if type(total) is int and total >= 0 else 0
