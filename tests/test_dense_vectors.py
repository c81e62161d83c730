"""The vectors folder reader (rag_corpus_check.retrieval.dense.folder, .npy): what a
team commits is read; what a pull request could craft (a pickle, a header
that lies, NaN, zero rows, a wrong shape or dtype) is refused with the file
and the row's line."""

from __future__ import annotations

import json
import pickle
from pathlib import Path

import numpy as np
import pytest

from rag_corpus_check.retrieval.dense.folder import Place, read_vectors
from rag_corpus_check.retrieval.dense.npy import MAX_HEADER, read_header
from rag_corpus_check.safe_io import InputError, Limits
from support.vectors import MODEL, write_folder

DOCS = [("d1", "alpha"), ("d2", "beta"), ("d3", "gamma")]
QUESTIONS = [("q1", "what is alpha?")]


def folder(tmp_path: Path, **kw) -> Path:
    return write_folder(tmp_path / "vec", DOCS, QUESTIONS, **kw)


def read(tmp_path: Path, model: str = MODEL, limits: Limits | None = None):
    return read_vectors(Place(str(tmp_path), str(tmp_path), "vec"), model, limits or Limits())


def refused(tmp_path: Path, **kw) -> InputError:
    with pytest.raises(InputError) as info:
        read(tmp_path, **kw)
    return info.value


def test_reads_a_folder(tmp_path):
    folder(tmp_path)
    v = read(tmp_path)
    assert v.documents.keys == ["d1", "d2", "d3"] and v.questions.keys == ["q1"]
    assert v.documents.vectors.shape == (3, 8) and isinstance(v.documents.vectors, np.memmap)
    assert set(v.digests) == {f"vec/{n}" for n in ("model.json", "documents.jsonl", "documents.npy",
                                                  "questions.jsonl", "questions.npy")}


def test_float16_is_read(tmp_path):
    folder(tmp_path, dtype="<f2")
    assert read(tmp_path).documents.vectors.dtype == np.float16


def test_another_model_is_refused(tmp_path):
    folder(tmp_path, model="other-model")
    exc = refused(tmp_path)
    assert exc.file == "vec/model.json" and "other-model" in exc.message and MODEL in exc.message


def test_pickled_object_array_is_refused(tmp_path):
    f = folder(tmp_path)
    np.save(f / "documents.npy", np.array([{"x": 1}, None, 3], dtype=object), allow_pickle=True)
    exc = refused(tmp_path)
    assert exc.file == "vec/documents.npy" and "'<f4'" in exc.message and "pickle" in exc.message


def test_a_raw_pickle_is_refused(tmp_path):
    f = folder(tmp_path)
    (f / "documents.npy").write_bytes(pickle.dumps([1.0, 2.0]))
    assert "magic" in refused(tmp_path).message


def test_float64_and_big_endian_are_refused(tmp_path):
    f = folder(tmp_path)
    np.save(f / "documents.npy", np.ones((3, 8), dtype="<f8"))
    assert "`<f8`" in refused(tmp_path).message
    np.save(f / "documents.npy", np.ones((3, 8), dtype=">f4"))
    assert "`>f4`" in refused(tmp_path).message


def _lie(path: Path, old: bytes, new: bytes) -> None:
    raw = path.read_bytes()
    assert old in raw[:128]
    new = new.ljust(len(old))
    path.write_bytes(raw.replace(old, new, 1))


def test_a_header_with_more_rows_than_the_data_is_refused(tmp_path):
    f = folder(tmp_path)
    _lie(f / "documents.npy", b"(3, 8)", b"(3000000, 8)")
    exc = refused(tmp_path)
    assert exc.file == "vec/documents.npy" and "3000000 × 8" in exc.message and "bytes" in exc.message


def test_a_header_with_a_huge_shape_is_refused_before_any_allocation(tmp_path):
    f = folder(tmp_path)
    _lie(f / "documents.npy", b"(3, 8)", b"(10**12, 8)")  # not a literal: refused as such
    assert "dict literal" in refused(tmp_path).message
    f = folder(tmp_path)
    _lie(f / "documents.npy", b"(3, 8)", b"(99999999999999, 99999999)")
    assert "99999999999999 × 99999999" in refused(tmp_path).message


def test_a_header_that_is_too_long_is_refused(tmp_path):
    f = folder(tmp_path)
    raw = (f / "documents.npy").read_bytes()
    body = raw[:8] + (MAX_HEADER + 1).to_bytes(2, "little") + raw[10:]
    (f / "documents.npy").write_bytes(body)
    assert f"over {MAX_HEADER}" in refused(tmp_path).message


def test_fortran_order_and_other_keys_are_refused(tmp_path):
    f = folder(tmp_path)
    _lie(f / "documents.npy", b"'fortran_order': False", b"'fortran_order': True")
    assert "Fortran" in refused(tmp_path).message
    f = folder(tmp_path)
    _lie(f / "documents.npy", b"'fortran_order': False", b"'fortran_order': 0")
    assert "Fortran" in refused(tmp_path).message


def test_three_dimensions_are_refused(tmp_path):
    f = folder(tmp_path)
    np.save(f / "documents.npy", np.ones((3, 2, 4), dtype="<f4"))
    assert "not 2-D" in refused(tmp_path).message


def test_rows_and_lines_must_agree(tmp_path):
    f = folder(tmp_path)
    np.save(f / "documents.npy", np.ones((2, 8), dtype="<f4"))
    exc = refused(tmp_path)
    assert exc.file == "vec/documents.npy" and "2 rows" in exc.message and "3 lines" in exc.message


def test_dimensions_must_match_the_model(tmp_path):
    f = folder(tmp_path)
    np.save(f / "questions.npy", np.ones((1, 9), dtype="<f4"))
    exc = refused(tmp_path)
    assert exc.file == "vec/questions.npy" and "9 dimensions" in exc.message


@pytest.mark.parametrize("value, why", [(np.nan, "NaN"), (np.inf, "infinite"), (0.0, "all zeros")])
def test_bad_rows_are_refused_at_their_line(tmp_path, value, why):
    f = folder(tmp_path)
    m = np.load(f / "documents.npy")
    m[1] = 0.0 if value == 0.0 else m[1]
    m[1, 3] = value
    np.save(f / "documents.npy", m)
    exc = refused(tmp_path)
    assert (exc.file, exc.line) == ("vec/documents.jsonl", 2)
    assert "row 1" in exc.message and "`d2`" in exc.message and why in exc.message


def test_duplicate_ids_and_bad_lines_are_refused(tmp_path):
    f = folder(tmp_path)
    lines = (f / "documents.jsonl").read_text().splitlines()
    (f / "documents.jsonl").write_text("\n".join([lines[0], lines[1], lines[0]]) + "\n")
    exc = refused(tmp_path)
    assert (exc.file, exc.line) == ("vec/documents.jsonl", 3) and "line 1" in exc.message
    (f / "documents.jsonl").write_text("\n".join([lines[0], lines[1], json.dumps({"id": "d3", "sha256": "x"})]))
    exc = refused(tmp_path)
    assert exc.line == 3 and "64 lowercase hex" in exc.message


def test_a_symlink_out_of_the_repository_is_refused(tmp_path):
    folder(tmp_path / "repo")
    outside = folder(tmp_path)
    (tmp_path / "repo" / "vec" / "documents.npy").unlink()
    (tmp_path / "repo" / "vec" / "documents.npy").symlink_to(outside / "documents.npy")
    with pytest.raises(InputError) as info:
        read(tmp_path / "repo")
    assert info.value.kind == "path" and "outside the repository" in info.value.message


def test_header_reader_needs_no_numpy_for_the_checks(tmp_path):
    f = folder(tmp_path)
    head = read_header(str(f / "documents.npy"), "documents.npy", 1 << 20)
    assert (head.descr, head.rows, head.cols) == ("<f4", 3, 8) and head.offset % 16 == 0


def test_a_header_that_claims_object_dtype_is_refused_before_numpy(tmp_path):
    f = folder(tmp_path)
    _lie(f / "documents.npy", b"'descr': '<f4'", b"'descr': '|O'")
    exc = refused(tmp_path)
    assert exc.file == "vec/documents.npy" and "`|O`" in exc.message and "pickles are never read" in exc.message


def test_a_file_cut_inside_its_data_is_refused(tmp_path):
    f = folder(tmp_path)
    raw = (f / "documents.npy").read_bytes()
    (f / "documents.npy").write_bytes(raw[:-3])
    assert "the file has" in refused(tmp_path).message


def test_vectors_over_the_file_limit_are_refused(tmp_path):
    folder(tmp_path)
    exc = refused(tmp_path, limits=Limits(max_file_bytes=100))
    assert exc.kind == "limit"
