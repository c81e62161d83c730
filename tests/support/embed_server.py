"""A real OpenAI-compatible embeddings server for the tests, on 127.0.0.1
(an ephemeral port): ``POST /v1/embeddings`` with ``{"model", "input":
[texts]}`` answers ``{"data": [{"embedding", "index"}], "usage"}``, the
vectors computed by a real small model installed offline
(tokenlearn-static-model 0.1.1, 64 dimensions: the bundled example's).

It counts what it receives (requests, texts, the keys it was sent) and can
misbehave on purpose (``mode``): ``429`` or ``500`` for the first ``fail``
requests, ``slow`` (answers after ``delay`` seconds), ``count`` (one vector
too few), ``dims`` (a vector one number short), ``nan`` (a NaN in a
vector), ``redirect`` (307 to ``location``)."""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

MODEL = "tokenlearn-static-model==0.1.1"
DIMENSIONS = 64


def embed_texts(texts: list[str]) -> list[list[float]]:
    """The model's vectors, as float32 values (what the store keeps)."""
    import numpy as np
    from static_model import get_embeddings

    return [[float(x) for x in np.asarray(v, dtype=np.float32)] for v in get_embeddings(texts)] if texts else []


@dataclass
class Seen:
    requests: int = 0
    texts: list[str] = field(default_factory=list)
    keys: list[str] = field(default_factory=list)
    models: list[str] = field(default_factory=list)


class EmbedServer:
    def __init__(self, mode: str = "ok", fail: int = 10**9, delay: float = 0.0, location: str = ""):
        self.mode, self.fail, self.delay, self.location = mode, fail, delay, location
        self.seen = Seen()
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:
                pass

            def do_POST(self) -> None:
                server.handle(self)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1/embeddings"

    def __enter__(self) -> EmbedServer:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def handle(self, req: BaseHTTPRequestHandler) -> None:
        body = json.loads(req.rfile.read(int(req.headers.get("Content-Length", "0"))))
        with self._lock:
            self.seen.requests += 1
            n = self.seen.requests
            self.seen.keys.append(req.headers.get("Authorization", ""))
            self.seen.models.append(body.get("model"))
        texts = body["input"]
        mode = self.mode if n <= self.fail else "ok"
        if mode in ("429", "500"):
            return self._send(req, int(mode), b'{"error": {"message": "try later"}}')
        if mode == "redirect":
            return self._send(req, 307, b"", {"Location": self.location})
        if mode == "slow":
            time.sleep(self.delay)
        with self._lock:
            self.seen.texts += texts
        vectors = embed_texts(texts)
        if mode == "count":
            vectors = vectors[:-1]
        elif mode == "dims":
            vectors[0] = vectors[0][:-1]
        answer = {"object": "list", "model": body.get("model"),
                  "data": [{"object": "embedding", "index": i, "embedding": v} for i, v in enumerate(vectors)],
                  "usage": {"prompt_tokens": sum(len(t.split()) for t in texts),
                            "total_tokens": sum(len(t.split()) for t in texts)}}
        data = json.dumps(answer).encode()
        if mode == "nan":
            answer["data"][0]["embedding"][0] = float("nan")
            data = json.dumps(answer).encode()  # json writes NaN for a float nan
        try:
            self._send(req, 200, data)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (a timeout test)

    @staticmethod
    def _send(req: BaseHTTPRequestHandler, code: int, data: bytes, headers: dict | None = None) -> None:
        req.send_response(code)
        req.send_header("Content-Type", "application/json")
        req.send_header("Content-Length", str(len(data)))
        for k, v in (headers or {}).items():
            req.send_header(k, v)
        req.end_headers()
        req.wfile.write(data)
