"""The bulk decimal parser: exactly float() wherever it takes a token, and it takes the usual forms."""

import re

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from trec.decimals import PADDING, parse_decimals


def parse(tokens: list[str]) -> tuple[np.ndarray, np.ndarray]:
    encoded = [token.encode() for token in tokens]
    buffer = np.frombuffer(b" ".join(encoded) + b"\n" + bytes(PADDING), dtype=np.uint8).copy()
    lengths = np.array([len(token) for token in encoded], dtype=np.int32)
    starts = np.concatenate(([0], np.cumsum(lengths + 1)[:-1])).astype(np.int32)
    return parse_decimals(buffer, starts, lengths)


def same_double(a: float, b: float) -> bool:
    return float(a).hex() == float(b).hex()


@st.composite
def plain_decimals(draw):
    sign = draw(st.sampled_from(["", "-", "+"]))
    integer = draw(st.text("0123456789", min_size=0, max_size=7))
    fraction = draw(st.none() | st.text("0123456789", min_size=0, max_size=16))
    if not integer and not fraction:
        integer = "0"
    return sign + integer + ("" if fraction is None else "." + fraction)


@settings(max_examples=300, deadline=None)
@given(st.lists(plain_decimals(), min_size=1, max_size=40))
def test_plain_decimals_are_parsed_exactly_like_float(tokens):
    values, parsed = parse(tokens)
    for token, value, ok in zip(tokens, values.tolist(), parsed.tolist(), strict=True):
        digits = sum(c.isdigit() for c in token)
        # The fast path must take every short enough token (at most 15 digits is always below 2^53).
        if digits <= 15:
            assert ok, token
        if ok:
            assert same_double(value, float(token)), token


@settings(max_examples=300, deadline=None)
@given(st.lists(st.text("0123456789.-+eE_infa", min_size=1, max_size=20), min_size=1, max_size=40))
def test_anything_else_is_left_to_the_caller_or_parsed_like_float(tokens):
    values, parsed = parse(tokens)
    for token, value, ok in zip(tokens, values.tolist(), parsed.tolist(), strict=True):
        if ok:
            assert same_double(value, float(token)), token


@settings(max_examples=300, deadline=None)
@given(st.lists(st.floats(allow_nan=False, allow_infinity=False), min_size=1, max_size=40))
def test_shortest_reprs_of_doubles_round_trip(numbers):
    tokens = [repr(number) for number in numbers]
    values, parsed = parse(tokens)
    for number, value, ok in zip(numbers, values.tolist(), parsed.tolist(), strict=True):
        if ok:
            assert same_double(value, number)


def test_typical_run_scores_all_take_the_fast_path():
    tokens = ["100.435020", "-3.25", "7", "0.000123", "12.", ".5", "-0", "99999999"]
    values, parsed = parse(tokens)
    assert parsed.all()
    assert [value.hex() for value in values.tolist()] == [float(token).hex() for token in tokens]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.text("0123456789.-+e", min_size=1, max_size=8), min_size=1, max_size=40))
def test_a_block_of_short_tokens_reads_as_the_general_path_does(tokens):
    # All within 8 bytes, the block is read a word a token; one longer token sends it down the general path.
    short, short_ok = parse(tokens)
    general, general_ok = parse([*tokens, "1.0000000001"])
    assert short_ok.tolist() == general_ok[:-1].tolist()
    for token, value, ok in zip(tokens, short.tolist(), short_ok.tolist(), strict=True):
        if ok:
            assert same_double(value, float(token)), token
        else:
            assert not re.fullmatch(r"[+-]?(\d+\.?\d*|\.\d+)", token), f"{token} is a plain decimal"
