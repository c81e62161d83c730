"""Entry point of action.yml's input check and run steps:
``python -I check/action_step.py validate|run``, with every input as JSON in
``ACTION_INPUTS`` (see rag_corpus_check/action_inputs.py).

``-I`` keeps the caller's working directory (the checked-out pull request) off
``sys.path``; this file puts only the action's own ``check/`` directory there, so
nothing in the workspace (a ``yaml.py``, a ``check/`` package, a ``.pth``) can be
imported in place of ours.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from rag_corpus_check.action_inputs import main

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
