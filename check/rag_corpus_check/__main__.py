import sys

from rag_corpus_check.cli import main

sys.exit(main())
