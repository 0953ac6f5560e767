"""Bootstrap resampling and sign-flip randomization, shared by agreement, significance and GSB.

Every statistic resampled here is a function of sums over items (tasks or queries) of a per-item statistic,
so a resample needs only `times_drawn @ statistics`: one matrix product per chunk of resamples, never a loop
over items. How `times_drawn` is drawn (both give the bootstrap's distribution: n items drawn with
replacement, each with probability 1/n):

- items one by one: n uniform indices per resample, counted with `bincount`; cost O(n) per resample;
- items of a few kinds (e.g. a task's grade counts: three annotators on a four-grade scale give at most 20
  kinds, whatever the number of tasks): the number of draws of each kind is multinomial(n, multiplicity / n);
  cost O(kinds) per resample.

Sign flips: each flip vector is n independent fair signs taken from random bytes (8 per byte), and
`flipped = total - 2 · (bits @ values)`, a matrix product in float64 (the p-value compares sums to a
threshold, so they are not rounded further).
"""

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from metrics.compute.labels import check_count, row_kinds

_ENTRIES_PER_CHUNK = 1_000_000
_COUNTS_IN_CACHE = 65_536


def check_resamples(value: object, name: str) -> int:
    count = check_count(value, name)
    if count < 1:
        raise ValueError(f"{name} must be at least 1")
    return count


def check_probability(value: object, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value < 1:
        raise ValueError(f"{name} must be between 0 and 1, got {value!r}")
    return float(value)


@dataclass(frozen=True)
class Resampling:
    """Validated settings of a bootstrap or randomization test."""

    n_resamples: int
    confidence: float
    seed: int

    @classmethod
    def of(cls, n_resamples: object, confidence: object, seed: object) -> "Resampling":
        n_resamples = check_resamples(n_resamples, "n_resamples")
        return cls(n_resamples, check_probability(confidence, "confidence"), check_count(seed, "seed"))

    def interval(self, resampled: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The percentile interval of [resamples × k] statistics, one (low, high) per column."""
        tail = (1 - self.confidence) / 2
        low, high = np.quantile(resampled, [tail, 1 - tail], axis=0)
        return low, high


def chunks(n_resamples: int, n_items: int) -> Iterator[int]:
    """Sizes of the resample chunks, each a [chunk × n_items] matrix of at most ~1e6 entries (8 MB of float64:
    smaller chunks ran the sign flips faster than 5e6 on the development machine)."""
    chunk = max(1, _ENTRIES_PER_CHUNK // max(n_items, 1))
    for start in range(0, n_resamples, chunk):
        yield min(chunk, n_resamples - start)


def bootstrap_sums(
    statistics: np.ndarray,
    resampling: Resampling,
    rng: np.random.Generator,
    *,
    multiplicity: np.ndarray | None = None,
) -> np.ndarray:
    """[n_resamples × k] sums of per-item statistics over n items drawn with replacement.

    Without `multiplicity`, `statistics` is [n × k], one row per item. With it, each row is a kind of item
    and `multiplicity[i]` (a positive integer) says how many of the n = sum(multiplicity) items are of kind i.
    """
    if multiplicity is not None:
        n = int(multiplicity.sum())
        shares = multiplicity / n
        return np.concatenate(
            [
                rng.multinomial(n, shares, size=size).astype(float) @ statistics
                for size in chunks(resampling.n_resamples, multiplicity.size)
            ]
        )
    n = statistics.shape[0]
    return np.concatenate([counts @ statistics for counts in times_drawn(n, resampling.n_resamples, rng)])


def times_drawn(n: int, n_resamples: int, rng: np.random.Generator) -> Iterator[np.ndarray]:
    """[chunk × n] how many times each of n items was drawn in each of `n_resamples` draws of n items with
    replacement, a chunk of resamples at a time (see `chunks`)."""
    # A chunk's flat indices stay below max(n, entries per chunk); int32 draws are faster.
    index_type = np.int32 if max(n, _ENTRIES_PER_CHUNK) < 2**31 else np.int64
    # Counted a few resamples at a time, so that bincount's counts stay in cache (a whole chunk's 8 MB of
    # counts made the random increments three times slower).
    rows_per_count = max(1, _COUNTS_IN_CACHE // n)
    for size in chunks(n_resamples, n):
        drawn = rng.integers(0, n, size=(size, n), dtype=index_type)
        counts = np.empty((size, n))
        for start in range(0, size, rows_per_count):
            rows = drawn[start : start + rows_per_count]
            shift: np.ndarray = n * np.arange(rows.shape[0], dtype=index_type)
            offset = rows + shift[:, None]
            flat = np.bincount(offset.ravel(), minlength=rows.size)
            counts[start : start + rows.shape[0]] = flat.reshape(rows.shape)
        yield counts


def sign_flip_sums(values: np.ndarray, n_flips: int, rng: np.random.Generator) -> np.ndarray:
    """[n_flips × k] sums of the [n × k] values, each item's sign flipped with probability 1/2."""
    n = values.shape[0]
    total = values.sum(axis=0)
    n_bytes = -(-n // 8)
    flipped = []
    for size in chunks(n_flips, n):
        random_bytes = np.frombuffer(rng.bytes(size * n_bytes), dtype=np.uint8).reshape(size, n_bytes)
        bits = np.unpackbits(random_bytes, axis=1, count=n)
        flipped.append(total - 2.0 * (bits.astype(float) @ values))
    return np.concatenate(flipped)


def item_kinds(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(index of the first item of each kind, number of items of that kind) of [items × k] integer rows.

    Items with equal rows are of one kind. Kinds come in the order of their first item, so the draws depend
    on which items are equal, not on their values (e.g. swapping good and bad verdicts negates every
    resample's GSB).
    """
    kind, first = row_kinds(rows)
    return first, np.bincount(kind, minlength=first.size)
