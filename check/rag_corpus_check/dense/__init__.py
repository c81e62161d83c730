"""Dense and hybrid retrieval from committed vectors (issue 23).

:mod:`npy` checks a ``.npy`` header before numpy reads the file,
:mod:`folder` reads a vectors folder, :mod:`search` is the exact cosine
search, :mod:`fusion` the reciprocal rank fusion with BM25, :mod:`trust`
the freshness and base checks. numpy is imported by :mod:`npy` and
:mod:`search` only, so a BM25 check never imports it.
"""

MODEL_FILE = "model.json"
# (kind, id key) of the two row files; each is `<kind>.npy` + `<kind>.jsonl`.
DOCUMENTS = ("documents", "id")
QUESTIONS = ("questions", "query_id")
FILES = (MODEL_FILE, "documents.jsonl", "documents.npy", "questions.jsonl", "questions.npy")


def folder_files(folder: str) -> list[str]:
    """The files of a vectors folder, as paths relative to the config."""
    return [f"{folder.rstrip('/')}/{name}" for name in FILES]
