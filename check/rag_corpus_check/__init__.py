"""rag-corpus-check: gate pull requests to a RAG knowledge base."""

__version__ = "0.1.0"
