"""Plain decimal numbers (`-12.375`, `7`, `.5`, `3.`) parsed in bulk straight from a byte buffer.

Each token is read as 8-byte words (SWAR: eight digits converted with three multiplications); a token of
at most 8 integer and 16 fraction digits becomes the integer M of all its digits and the count e of its
fraction digits. When M ≤ 2^53 the value is M / 10^e in float64: both operands are exact and IEEE division
rounds correctly, so it is the same double as Python's `float()` of the token (Clinger's fast path).
Anything else (exponents, `inf`, `nan`, signs alone, longer tokens, more digits) is left to the caller.
"""

import numpy as np

# Padding the caller leaves after the last token, so that every word read here stays in the buffer.
PADDING = 32

_U = np.uint64
_ZEROS = _U(0x3030303030303030)
_LOW_NIBBLES = _U(0x0F0F0F0F0F0F0F0F)
_HIGH_NIBBLES = _U(0xF0F0F0F0F0F0F0F0)
_SIXES = _U(0x0606060606060606)
_POINTS = _U(0x2E2E2E2E2E2E2E2E)
_ONES = _U(0x0101010101010101)
_HIGH_BITS = _U(0x8080808080808080)
# Keeping the low k bytes of a little-endian word: KEEP_BYTES[k].
KEEP_BYTES = np.array([(1 << (8 * k)) - 1 for k in range(9)], dtype=np.uint64)
_POWERS = np.array([10**e for e in range(17)], dtype=np.uint64)
_FLOAT_POWERS = np.array([10.0**e for e in range(17)])
# For k kept bytes: how far they move up, and the '0's that fill the k bytes below them.
_SHIFT_UP = np.array([8 * (8 - k) for k in range(9)], dtype=np.uint64)
_ZERO_FILL = np.array([0x3030303030303030 >> (8 * k) for k in range(9)], dtype=np.uint64)
_EXACT = 1 << 53
_BLOCK = 1 << 16
_MINUS, _PLUS = ord("-"), ord("+")


def words(buffer: np.ndarray) -> np.ndarray:
    """The little-endian 8-byte word starting at each byte of a contiguous uint8 buffer (overlapping)."""
    return np.ndarray((buffer.size - 7,), dtype="<u8", buffer=buffer, strides=(1,))


def lowest_byte(flags: np.ndarray) -> np.ndarray:
    """Index (0–7) of the lowest byte whose high bit is set in each word; 8 where none is."""
    lowest = flags & (~flags + _U(1))
    return np.bitwise_count(lowest - _U(1)) >> np.uint8(3)


def parse_decimals(
    buffer: np.ndarray, starts: np.ndarray, lengths: np.ndarray, out: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """The value of each token `buffer[start:start + length]` (written to `out`, float64, when given),
    and whether it was parsed here.

    `buffer` is contiguous uint8 with at least PADDING bytes after every token. Where the second result is
    False the first holds garbage: the caller parses those tokens some other way.
    """
    view = words(buffer)
    values = np.empty(starts.size) if out is None else out
    ok = np.empty(starts.size, dtype=bool)
    # Blocks small enough that the dozens of temporaries stay in cache and are reused, not page-faulted.
    for begin in range(0, starts.size, _BLOCK):
        part = slice(begin, begin + _BLOCK)
        values[part], ok[part] = _parse_block(buffer, view, starts[part], lengths[part])
    return values, ok


def _parse_block(buffer, view, starts, lengths):
    first = buffer[starts]
    negative = first == _MINUS
    signed = negative | (first == _PLUS)
    starts = starts + signed
    lengths = lengths - signed
    # Where the point is: the first byte equal to '.' in the first word (8: none there).
    head = view[starts]
    difference = head ^ _POINTS
    point = lowest_byte((difference - _ONES) & ~difference & _HIGH_BITS)
    has_point = (point < 8) & (point < lengths)
    integer_digits = np.minimum(point, lengths)
    fraction_digits = np.where(has_point, lengths - point - 1, 0)
    if lengths.size and lengths.max() <= 8:
        # Every token in its first word (scores such as `19.379`): its digits, the point taken out, are
        # one word of at most 7 digits, read at once instead of the integer and fraction apart.
        total_digits = integer_digits + fraction_digits
        below = KEEP_BYTES[integer_digits]
        joined = (head & below) | ((head >> _U(8)) & ~below)
        mantissa, ok = _digits(joined, total_digits)
        ok &= total_digits > 0
    else:
        mantissa, ok = _mantissa(view, head, starts, lengths, integer_digits, fraction_digits, has_point)
    values = mantissa.astype(np.float64)
    values /= _FLOAT_POWERS[np.minimum(fraction_digits, 16)]
    np.negative(values, out=values, where=negative)
    return values, ok


def _mantissa(view, head, starts, lengths, integer_digits, fraction_digits, has_point):
    """The integer M of a token's digits (at most 8 integer and 16 fraction digits, 17 in all), and
    whether it was read: all digits, and M ≤ 2^53."""
    total_digits = integer_digits + fraction_digits
    # At most 17 digits: M < 10^17 cannot overflow 64 bits before it is compared with 2^53.
    ok = (integer_digits <= 8) & (fraction_digits <= 16) & (total_digits > 0) & (total_digits <= 17)
    # The integer part ends the word at the token start; a token without a point in its first word has
    # integer_digits 8 only when it is 8 digits long, otherwise it falls back.
    ok &= has_point | (lengths <= 8)
    integer, valid = _digits(head, np.minimum(integer_digits, 8))
    ok &= valid
    fraction_start = starts + integer_digits + 1
    first_fraction = np.minimum(fraction_digits, 8)
    high, valid = _digits(view[fraction_start], first_fraction)
    ok &= valid
    second_fraction = np.clip(fraction_digits - 8, 0, 8)
    mantissa = integer * _POWERS[first_fraction] + high
    if second_fraction.any():
        low, valid = _digits(view[fraction_start + 8], second_fraction)
        ok &= valid
        mantissa = mantissa * _POWERS[second_fraction] + low
    ok &= mantissa <= _U(_EXACT)
    return mantissa, ok


def _digits(word: np.ndarray, count: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The number written by the first `count` (0–8) bytes of each word, and whether they are all digits.

    The kept bytes move to the word's top and '0's fill below them, so every word reads as eight digits.
    """
    padded = (word << _SHIFT_UP[count]) | _ZERO_FILL[count]
    valid = ((padded & _HIGH_NIBBLES) == _ZEROS) & ((((padded & _LOW_NIBBLES) + _SIXES) & _HIGH_NIBBLES) == 0)
    value = padded - _ZEROS
    value = (value * _U(10) + (value >> _U(8))) & _U(0x00FF00FF00FF00FF)
    value = (value * _U(100) + (value >> _U(16))) & _U(0x0000FFFF0000FFFF)
    value = (value * _U(10000) + (value >> _U(32))) & _U(0x00000000FFFFFFFF)
    return value, valid
