"""The vectorised text and varint encoders against Python's own."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
from google.protobuf.internal.encoder import _VarintBytes
from hypothesis import given, settings
from hypothesis import strategies as st

from tfprof_nb.export._bytes import decimal_text, fixed_point_text, gather, record_pieces
from tfprof_nb.export._protowire import varint, varint_text

_SETTINGS = dict(max_examples=60, deadline=None, database=None, derandomize=True)
int64s = st.lists(st.integers(-(2**63), 2**63 - 1), min_size=1, max_size=50)


def _texts(text, start, length) -> list[str]:
    return [bytes(text[s:s + n]).decode() for s, n in zip(start.tolist(), length.tolist())]


@settings(**_SETTINGS)
@given(int64s)
def test_fixed_point_is_the_exact_quotient(values):
    texts = _texts(*fixed_point_text(np.array(values, np.int64)))
    for v, t in zip(values, texts):
        assert Fraction(t) == Fraction(v, 10**6)
        assert float(t) == v / 1e6  # both the double nearest the same rational
        assert not ("." in t and t.endswith("0")) and not t.endswith(".")


@settings(**_SETTINGS)
@given(st.lists(st.tuples(st.integers(0, 2**64 - 1), st.booleans(), st.booleans()),
                min_size=1, max_size=50))
def test_decimal_text(rows):
    mag = np.array([r[0] for r in rows], np.uint64)
    negative = np.array([r[1] for r in rows])
    quote = np.array([r[2] for r in rows])
    for (m, neg, q), t in zip(rows, _texts(*decimal_text(mag, negative, quote))):
        want = ("-" if neg else "") + str(m)
        assert t == (f'"{want}"' if q else want)


@settings(**_SETTINGS)
@given(st.lists(st.integers(0, 2**64 - 1), min_size=1, max_size=50), st.integers(0, 255))
def test_varints_match_protobuf(values, prefix):
    text, start, length = varint_text(np.array(values, np.uint64),
                                      prefix=np.full(len(values), prefix, np.uint8))
    for v, s, n in zip(values, start.tolist(), length.tolist()):
        assert bytes(text[s:s + n]) == bytes([prefix]) + _VarintBytes(v) == \
            bytes([prefix]) + varint(v)
    signed = np.array([-1, -(2**63), 5], np.int64)  # int64 fields: two's complement
    text, start, length = varint_text(signed)
    assert [bytes(text[s:s + n]) for s, n in zip(start, length)] == \
        [_VarintBytes(v & (2**64 - 1)) for v in (-1, -(2**63), 5)]


def test_records_interleave_heads_rows_and_tails():
    pool = np.frombuffer(b"HhRrT", np.uint8)
    head = (np.array([[0, 1], [0, 1], [0, 1]]), np.ones((3, 2), np.int64))
    rows = (np.array([[2, 3]] * 3), np.ones((3, 2), np.int64))
    tail = (np.array([[4]] * 3), np.ones((3, 1), np.int64))
    starts, lengths = record_pieces(head, rows, np.array([0, 0, 2]), tail)
    assert bytes(gather(pool, starts, lengths)) == b"HhRrRrT" + b"HhT" + b"HhRrT"
