from rag_corpus_check.commands.cli import run

run()
