"""Entry point of action.yml's input check and run steps:
``python -I check/action_step.py validate|run``, with every input as JSON in
``ACTION_INPUTS`` (the table: rag_corpus_check/commands/action_inputs.py).

``validate`` needs the standard library only (it runs on setup-python's bare
interpreter, before anything is installed). ``run`` then runs launch.py, the
CLI's entry point, in this process with the arguments the inputs map to.

``-I`` keeps the caller's working directory (the checked-out pull request) off
``sys.path``; this file puts only the action's own ``check/`` directory there, so
nothing in the workspace (a ``yaml.py``, a ``check/`` package, a ``.pth``) can be
imported in place of ours.
"""

import os
import runpy
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from rag_corpus_check.commands.action_inputs import main

if __name__ == "__main__":
    result = main(sys.argv[1:])
    if isinstance(result, int):
        sys.exit(result)
    sys.argv = [os.path.join(os.path.dirname(os.path.abspath(__file__)), "launch.py"), *result]
    runpy.run_path(sys.argv[0], run_name="__main__")
