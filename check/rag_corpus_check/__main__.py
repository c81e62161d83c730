from rag_corpus_check.cli import run

run()
