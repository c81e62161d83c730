"""Entry point used by action.yml: ``python -I check/launch.py ...``.

``-I`` keeps the caller's working directory (the checked-out pull request) off
``sys.path``; this file puts only the action's own ``check/`` directory there, so
nothing in the workspace (a ``yaml.py``, a ``check/`` package, a ``.pth``) can be
imported in place of ours.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from rag_corpus_check.commands.cli import run

if __name__ == "__main__":
    run()
