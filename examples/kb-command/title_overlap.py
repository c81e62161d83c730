"""A stand-in for a team's own retriever, used by the example config next to
it: ranks documents by how many question words appear in their title.

rag-corpus-check runs it as:
    python3 title_overlap.py CORPUS QUESTIONS OUTPUT DEPTH
and reads OUTPUT as a run (JSONL: {"query_id", "ranking"} per line).
Standard library only.
"""

import json
import re
import sys


def words(text):
    return set(re.findall(r"\w+", text.casefold()))


def main(corpus_path, questions_path, output_path, depth):
    docs = []
    with open(corpus_path, encoding="utf-8") as f:
        for line in f:
            if line.strip():
                rec = json.loads(line)
                if rec.get("status", "active") == "active":
                    docs.append((rec["id"], words(rec.get("title", "") + " " + rec["text"][:200])))
    with open(questions_path, encoding="utf-8") as f, open(output_path, "w", encoding="utf-8") as out:
        for line in f:
            q = json.loads(line)
            qw = words(q["query"])
            scored = sorted(((-len(qw & dw), doc_id) for doc_id, dw in docs if qw & dw))
            ranking = [doc_id for _, doc_id in scored[: int(depth)]]
            out.write(json.dumps({"query_id": q["query_id"], "ranking": ranking}) + "\n")
    print(f"title_overlap: ranked {len(docs)} documents")


if __name__ == "__main__":
    main(*sys.argv[1:5])
