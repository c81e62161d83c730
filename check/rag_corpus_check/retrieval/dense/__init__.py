"""Dense and hybrid retrieval from committed vectors or a store found by text.

:mod:`npy` checks a ``.npy`` header before numpy reads the file,
:mod:`folder` reads a vectors folder, :mod:`search` is the exact cosine
search, :mod:`fusion` the reciprocal rank fusion with BM25, :mod:`trust`
the freshness check, :mod:`base_identity` the base check, :mod:`choice` the
vectors the base's questions are ranked with; :mod:`store` is the store
found by text hash, :mod:`endpoint` embeds texts in the job, :mod:`supply`
orders the sources of a store's vectors; :mod:`ranker` puts them together. :mod:`rankers` imports them only for a dense or hybrid ranker.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field
from urllib.parse import urlsplit


@dataclass(frozen=True)
class Endpoint:
    """``retriever.endpoint`` as a trusted config names it."""

    url: str
    key_env: str
    timeout: float = 60.0
    batch: int = 64
    max_texts: int = 10_000
    max_tokens: int = 5_000_000

    @property
    def host(self) -> str:
        return urlsplit(self.url).hostname or "?"

    def rule(self) -> str:
        """How the rules show it (never the key: only the variable's name)."""
        return f"{self.url} (key in ${self.key_env})"


class EndpointError(Exception):
    """The endpoint failed (``kind`` "embedding": exit 3) or a bound was
    reached (``kind`` "limit": exit 2). The message names the host, never
    the key. Here, not in :mod:`endpoint`, so that catching it needs no
    HTTP stack (``urllib.request`` takes ~10 ms to import; only a check with
    an endpoint imports it)."""

    def __init__(self, kind: str, message: str):
        super().__init__(message)
        self.kind, self.message = kind, message


def url_problem(url: str) -> str | None:
    """Why the key must not go to ``url``, or None."""
    try:
        parts = urlsplit(url)
        host = parts.hostname
        parts.port  # noqa: B018 - raises on a bad port
    except ValueError:
        return "is not a URL"
    if parts.username or parts.password:
        return "must not hold a user or password (the key comes from `key_env`)"
    if not host:
        return "has no host"
    if parts.scheme == "https" or (parts.scheme == "http" and loopback(host)):
        return None
    return "must be https:// (plain http:// only to a loopback address, for a local server)"


def loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


# A store found by text (store.py): its description and its folder of segments.
STORE_FILE = "store.json"
SEGMENTS = "segments"
MAX_SEGMENTS = 4096

EMBED_FIELDS = ("title", "text")


def embedded_text(rec: dict, fields: tuple[str, ...]) -> str:
    """What a corpus record's vector embeds (``retriever.embed``): the values
    of ``fields`` it has (non-empty), joined by a newline."""
    return "\n".join(value for value in (rec.get(name) for name in fields) if isinstance(value, str) and value)


MODEL_FILE = "model.json"
# (kind, id key) of the two row files; each is `<kind>.npy` + `<kind>.jsonl`.
DOCUMENTS = ("documents", "id")
QUESTIONS = ("questions", "query_id")
FILES = (MODEL_FILE, "documents.jsonl", "documents.npy", "questions.jsonl", "questions.npy")


def folder_files(folder: str) -> list[str]:
    """The files of a vectors folder, as paths relative to the config."""
    return [f"{folder.rstrip('/')}/{name}" for name in FILES]


SHOWN = 20  # ids listed in the console and the summary (all are in the results file)


@dataclass
class VectorTrust:
    """With a base: the rows this PR supplied (texts the base has no vector
    for: new or changed) and the rows of unchanged texts whose vector is not
    the base's, bit for bit (the gate fails on any). ``base_model`` is None
    when the base had no vectors of the same model to compare with: then
    every row is supplied."""

    supplied: dict[str, list[str]] = field(default_factory=dict)  # kind ("documents"/"questions") -> ids
    differ: dict[str, list[str]] = field(default_factory=dict)
    base_model: str | None = None

    def count(self, what: str) -> int:
        return sum(map(len, getattr(self, what).values()))

    def first(self, what: str) -> list[str]:
        """The first :data:`SHOWN` ids, as `kind:id`."""
        return [f"{kind[:-1]} {key}" for kind, keys in getattr(self, what).items() for key in keys][:SHOWN]

    def reason(self) -> str:
        return (f"the vectors of {self.count('differ')} unchanged texts differ from the base (the first: "
                f"{', '.join(self.first('differ'))}); a text whose sha256 the base has must keep the base's "
                "vector bit for bit — restore those rows (a new model needs a new `retriever.model`)")

    def to_json(self) -> dict:
        return {"compared_with_base_model": self.base_model, "supplied": self.count("supplied"),
                "supplied_ids": self.supplied, "differ": self.count("differ"), "differ_ids": self.differ}
