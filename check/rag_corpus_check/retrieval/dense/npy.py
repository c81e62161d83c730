"""A ``.npy`` file read without trusting it.

The header is checked here, byte by byte, before numpy sees the file: the
magic string and version, a header length of at most :data:`MAX_HEADER`
bytes, a dict literal (parsed with :func:`ast.literal_eval` only after the
size check) with exactly ``descr``, ``fortran_order`` and ``shape``; ``descr``
``'<f4'`` or ``'<f2'``, ``fortran_order`` False, a 2-D shape, and a file size
of exactly header + rows × columns × item size: a header that lies about the
data is refused. Only then is the file opened with
``numpy.load(mmap_mode="r", allow_pickle=False)`` (memory-mapped: nothing is
read until used), and the array numpy made must be the one the header said.
Every refusal is an :class:`InputError` naming the file.
"""

from __future__ import annotations

import ast
import mmap
import os
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from rag_corpus_check.safe_io import InputError, open_regular

MAGIC = b"\x93NUMPY"
MAX_HEADER = 4096  # numpy writes ~128 bytes; numpy itself refuses over 10,000 by default
ITEM_SIZE = {"<f4": 4, "<f2": 2}
_LENGTH_BYTES = {1: 2, 2: 4, 3: 4}  # format version -> bytes of the header length


@dataclass(frozen=True)
class Header:
    descr: str
    rows: int
    cols: int
    offset: int  # where the data starts


def _bad(display: str, why: str) -> InputError:
    return InputError("parse", f"not a valid vectors file: {why}; write it with numpy.save of a 2-D float32 or "
                               "float16 array", file=display)


def read_header(real: str, display: str, max_bytes: int) -> Header:
    """The header of ``real``, checked against the file's size."""
    with open_regular(real, display, max_bytes) as f:
        size = os.fstat(f.fileno()).st_size
        start = f.read(len(MAGIC) + 2 + 4)
        header = _header_text(f, start, display)
        offset = f.tell()
    fields = _fields(header, display)
    head = Header(fields["descr"], fields["shape"][0], fields["shape"][1], offset)
    expected = offset + head.rows * head.cols * ITEM_SIZE[head.descr]
    if size != expected:
        raise _bad(display, f"the header says {head.rows} × {head.cols} {head.descr} values ({expected} bytes "
                            f"with the header), but the file has {size} bytes")
    return head


def _header_text(f, start: bytes, display: str) -> str:
    width = _length_width(start, display)
    at = len(MAGIC) + 2
    length = int.from_bytes(start[at:at + width], "little")
    if len(start) < at + width or length > MAX_HEADER:
        raise _bad(display, f"the header is {length} bytes, over {MAX_HEADER}")
    f.seek(at + width)
    raw = f.read(length)
    if len(raw) != length:
        raise _bad(display, "the file ends inside its header")
    return _decode(raw, start[len(MAGIC)], display)


def _length_width(start: bytes, display: str) -> int:
    """How many bytes give the header's length, by the format version."""
    if len(start) < len(MAGIC) + 2 or not start.startswith(MAGIC):
        raise _bad(display, "it does not start with the .npy magic string")
    width = _LENGTH_BYTES.get(start[len(MAGIC)])
    if width is None:
        raise _bad(display, f".npy format version {start[len(MAGIC)]} is not known (1, 2 or 3)")
    return width


def _decode(raw: bytes, major: int, display: str) -> str:
    try:
        return raw.decode("utf-8" if major == 3 else "latin-1")
    except UnicodeDecodeError:
        raise _bad(display, "the header is not text") from None


def _fields(text: str, display: str) -> dict:
    value = _literal(text, display)
    if value["descr"] not in ITEM_SIZE:
        raise _bad(display, f"dtype `{str(value['descr'])[:40]}` is not float32 ('<f4') or float16 ('<f2') "
                            "(object arrays and pickles are never read)")
    if value["fortran_order"] is not False:
        raise _bad(display, "the array is in Fortran order")
    if not _two_d(value["shape"]):
        raise _bad(display, f"the shape `{str(value['shape'])[:60]}` is not 2-D (rows, dimensions)")
    return value


def _literal(text: str, display: str) -> dict:
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        raise _bad(display, "the header is not a Python dict literal") from None
    if not isinstance(value, dict) or set(value) != {"descr", "fortran_order", "shape"}:
        raise _bad(display, "the header must hold exactly `descr`, `fortran_order` and `shape`")
    return value


def _two_d(shape) -> bool:
    return isinstance(shape, tuple) and len(shape) == 2 and all(type(n) is int and n >= 0 for n in shape)


def load(real: str, display: str, max_bytes: int) -> np.ndarray:
    """The file's array, memory-mapped, after :func:`read_header`."""
    head = read_header(real, display, max_bytes)
    if head.rows == 0:
        return np.zeros((0, head.cols), dtype=head.descr)
    try:
        array = np.load(real, mmap_mode="r", allow_pickle=False)
    except (ValueError, OSError) as exc:
        raise _bad(display, f"numpy cannot read it ({exc.__class__.__name__})") from None
    if array.dtype != np.dtype(head.descr) or array.shape != (head.rows, head.cols) or array.offset != head.offset:
        raise _bad(display, "numpy read another array than its header describes")
    return array


BLOCK_BYTES = 16 * 1024**2  # rows are checked (and searched) this many bytes (as float64) at a time


def block_rows(array: np.ndarray) -> int:
    """How many rows of ``array`` make a block of about :data:`BLOCK_BYTES` (as float64)."""
    return max(1, BLOCK_BYTES // (8 * max(1, array.shape[1])))


def row_blocks(array: np.ndarray, step: int) -> Iterator[tuple[int, np.ndarray]]:
    """``(first row, rows)`` of ``array``, ``step`` rows at a time. The file
    of a memory-mapped array (:func:`load`) is read into one buffer, reused
    (so the rows of a block are valid until the next block): read through
    the map, every page read would stay in the process's memory until the
    end (768 MB at 1M × 384 float16 rows)."""
    if not (isinstance(array, np.memmap) and _whole_file(array)):
        for start in range(0, array.shape[0], step):
            yield start, np.asarray(array[start:start + step])
        return
    yield from _from_file(array, step)


def _from_file(array: np.memmap, step: int) -> Iterator[tuple[int, np.ndarray]]:
    name = str(array.filename)
    buffer = np.empty((min(step, array.shape[0]), array.shape[1]), dtype=array.dtype)
    with open(name, "rb", buffering=0) as f:
        f.seek(array.offset)
        for start in range(0, array.shape[0], step):
            rows = buffer[:min(step, array.shape[0] - start)]
            _fill(f, rows.data.cast("B"), name)
            yield start, rows


def _whole_file(array: np.memmap) -> bool:
    """Whether ``array`` maps a whole ``.npy`` file's data (not a slice of it)."""
    return (isinstance(array.base, mmap.mmap) and array.filename is not None and array.flags.c_contiguous
            and array.size > 0)


def _fill(f, view: memoryview, name: str) -> None:
    got = 0
    while got < len(view):
        n = f.readinto(view[got:])
        if not n:
            raise InputError("parse", "the file changed while it was read", file=os.path.basename(name))
        got += n


def bad_row(array: np.ndarray) -> tuple[int, str] | None:
    """The first row (0-based) that is no usable vector, and why: a NaN or
    infinite value, or all zeros (a cosine needs a length)."""
    step = block_rows(array)
    block = np.empty((min(step, array.shape[0]), array.shape[1]), dtype=np.float64)
    for start, rows in row_blocks(array, step):
        values = block[:len(rows)]
        np.copyto(values, rows)
        finite = np.isfinite(values).all(axis=1)
        nonzero = values.any(axis=1)
        bad = np.flatnonzero(~(finite & nonzero))
        if bad.size:
            row = int(bad[0])
            return start + row, "a NaN or infinite value" if not np.isfinite(values[row]).all() else "all zeros"
    return None
