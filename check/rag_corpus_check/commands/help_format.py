"""The command line's help formatter: argparse's, without its shutil import.

argparse builds a formatter for every option a parser adds (to check the
option's metavar), and a formatter asks ``shutil.get_terminal_size`` for the
width, importing shutil — and with it bz2, lzma and fnmatch — into every run
that parses a command line. This one asks the same question the same way
(``$COLUMNS``, else the width of the terminal on standard output, else 80)
with ``os`` alone, so the help reads exactly as before.
"""

from __future__ import annotations

import argparse
import os
import sys

FALLBACK_COLUMNS = 80  # shutil.get_terminal_size's fallback


def terminal_columns() -> int:
    """The terminal's width as ``shutil.get_terminal_size().columns`` finds it."""
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns or FALLBACK_COLUMNS


class RawDescriptionHelpFormatter(argparse.RawDescriptionHelpFormatter):
    """argparse's formatter of the same name, its default width from :func:`terminal_columns`."""

    def __init__(self, prog: str, indent_increment: int = 2, max_help_position: int = 24, width: int | None = None):
        super().__init__(prog, indent_increment, max_help_position, terminal_columns() - 2 if width is None else width)
