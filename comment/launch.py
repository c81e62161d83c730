"""Entry point used by comment/action.yml: ``python -I comment/launch.py``.

``-I`` keeps the working directory and PYTHON* variables out; this file puts
only the action's own directories on ``sys.path`` (``comment/`` for
sticky.py, ``check/`` for the package). Nothing is checked out in the comment
job, and nothing outside the action is imported.
"""

import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [_HERE, os.path.join(os.path.dirname(_HERE), "check")]

from sticky import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
