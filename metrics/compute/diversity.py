"""Diversity and novelty measures: intent-aware measures over intent-level judgments (α-nDCG, ERR-IA,
subtopic recall...), equal to ndeval, the TREC Web track's diversity evaluator; intra-list similarity over
documents' categorical attributes; novelty as self-information of popularity.

Intent-aware measures (`evaluate_intents`) work on a `[queries × depth × intents]` boolean array, True where
the document at that rank is relevant to that intent, and on the same for every judged document of each
query (for the ideal ranking). Conventions, all ndeval's (version 4.5, as pyndeval and ir_measures run it):

- Relevance is binary per intent: the caller marks a (document, intent) relevant when its judgment reaches
  the threshold (ndeval: judgment ≥ 1). Unjudged documents are relevant to nothing.
- Intents count equally (weight 1/S each), and only the S intents that at least one judged document is
  relevant to: an intent no document serves is left out. A query with S = 0 scores 0 on every measure.
- Gain: the document at rank i gains Σ_j rel_ij · (1 − α)^{c_ij}, c_ij the number of documents above i
  relevant to intent j (its (1 − α) factors multiplied one at a time, as ndeval does).
- Discount: 1 / log2(i + 1) (α-DCG); 1 / i (ERR-IA).
- Ideal ranking: built greedily from all judged documents of the query, each step taking the document of
  largest gain given those taken; ties go to the later judged document, which is ndeval's largest document
  id when judged documents come sorted by id (the evaluation does that). The greedy ranking is ndeval's; the
  true ideal is NP-hard.
- Normalisation: α-DCG@k and ERR-IA@k are divided by their "ideal ideal", a document relevant to every
  intent at every rank: Σ_{i ≤ k} S · (1 − α)^{i−1} · discount(i). As in ndeval, rank 1 is not divided
  (its loop starts at rank 2), so α-DCG@1 and ERR-IA@1 are the number of intents the first document serves.
  α-nDCG@k and nERR-IA@k divide the run's by the greedy ideal ranking's; 0 when the run gains nothing.
- A list shorter than k is scored as it is (no gain past its end); P-IA@k still divides by k.
- ndeval stops at rank 20; the same formulas are used at any k.

    α-DCG@k    = Σ_{i ≤ k} gain_i / log2(i + 1), normalised as above
    α-nDCG@k   = α-DCG@k / the greedy ideal ranking's α-DCG@k
    ERR-IA@k   = Σ_{i ≤ k} gain_i / i, normalised as above
    nERR-IA@k  = ERR-IA@k / the greedy ideal ranking's ERR-IA@k
    P-IA@k     = Σ_{i ≤ k} Σ_j rel_ij / (k · S)
    StRecall@k = |{j : some i ≤ k has rel_ij}| / S

References: Clarke et al., "Novelty and diversity in information retrieval evaluation", SIGIR 2008 (α-nDCG);
Agrawal et al., "Diversifying search results", WSDM 2009 (intent-aware measures); Chapelle et al.,
"Expected reciprocal rank for graded relevance", CIKM 2009 (ERR, ERR-IA); Zhai, Cohen and Lafferty,
"Beyond independent relevance", SIGIR 2003 (subtopic recall); Ziegler et al., "Improving recommendation
lists through topic diversification", WWW 2005 (intra-list similarity); Vargas and Castells, "Rank and
relevance in novelty and diversity metrics for recommender systems", RecSys 2011 (novelty as
self-information).
"""

import math
from collections.abc import Iterable

import numpy as np
from numpy.typing import ArrayLike

from metrics.compute.ranking import ratio_or_zero
from trec.measures import DEFAULT_ALPHA, Measure, parse_measure

DEFAULT_INTENT_MEASURES = (
    "alpha_nDCG@5",
    "alpha_nDCG@10",
    "alpha_nDCG@20",
    "ERR_IA@20",
    "nERR_IA@20",
    "StRecall@20",
)
_QUERY_BLOCK = 4096


def evaluate_intents(
    relevance: ArrayLike,
    judged_relevance: ArrayLike,
    measures: Iterable[str | Measure],
    *,
    alpha: float = DEFAULT_ALPHA,
) -> dict[str, np.ndarray]:
    """Per-query values of intent-aware measures, keyed by canonical name (`alpha_nDCG@20`, `ERR_IA@10`).

    `relevance`: `[queries × depth × intents]` bool, each query's retrieved documents in rank order (False
    for unjudged documents and past the end of a list). `judged_relevance`: `[queries × judged × intents]`
    bool, every judged document of each query (all False for padding), sorted by document id for ndeval's
    ties in the ideal ranking; it must hold every retrieved relevant document. `alpha` in [0, 1] is the
    redundancy intolerance of measures that do not set their own (`alpha_nDCG(alpha=0.3)@20` does).
    Formulas and conventions: the module docstring.
    """
    relevance = _as_intent_array(relevance, "relevance")
    judged = _as_intent_array(judged_relevance, "judged_relevance")
    if judged.shape[0] != relevance.shape[0] or judged.shape[2] != relevance.shape[2]:
        raise ValueError(
            f"judged_relevance is {judged.shape[0]} queries × {judged.shape[2]} intents but relevance is"
            f" {relevance.shape[0]} × {relevance.shape[2]}"
        )
    _check_alpha(alpha)
    parsed = [
        measure if isinstance(measure, Measure) else parse_measure(measure, intents=True)
        for measure in measures
    ]
    if not parsed:
        raise ValueError("measures must name at least one measure")
    for measure in parsed:
        if not measure.intent_aware or measure.k is None:
            raise ValueError(f"measure {str(measure)!r} is not an intent-aware measure with a cut-off")
        if measure.alpha is not None:
            _check_alpha(measure.alpha)
    depth = max(measure.k or 0 for measure in parsed)
    served = judged.any(axis=1)
    if (relevance.any(axis=1) & ~served).any():
        raise ValueError("relevance marks a document relevant to an intent that no judged document serves")
    intents = served.sum(axis=1).astype(float)
    ranked = np.zeros((relevance.shape[0], depth, relevance.shape[2]), dtype=bool)
    ranked[:, : min(depth, relevance.shape[1])] = relevance[:, :depth]
    scorer = _IntentScorer(ranked, judged, intents, depth)
    return {
        str(measure): scorer.score(measure, alpha if measure.alpha is None else float(measure.alpha))
        for measure in parsed
    }


def _as_intent_array(values: ArrayLike, name: str) -> np.ndarray:
    array = np.asarray(values)
    if array.ndim != 3 or array.dtype != bool:
        raise ValueError(
            f"{name} must be a [queries × documents × intents] bool array, got {array.dtype} {array.shape}"
        )
    return array


def _check_alpha(alpha: float) -> None:
    if isinstance(alpha, bool) or not isinstance(alpha, int | float) or not 0 <= alpha <= 1:
        raise ValueError(f"alpha must be a number from 0 to 1, got {alpha!r}")


def _discounts(depth: int) -> np.ndarray:
    """ndeval's discount of ranks 1..depth, log(2) / log(rank + 1), computed as it computes it."""
    return math.log(2.0) / np.log(np.arange(2, depth + 2, dtype=float))


class _IntentScorer:
    """Shares each alpha's gains and ideal ranking between the measures that need them."""

    def __init__(self, ranked: np.ndarray, judged: np.ndarray, intents: np.ndarray, depth: int):
        self.ranked, self.judged, self.intents, self.depth = ranked, judged, intents, depth
        self._cache: dict[tuple, tuple[np.ndarray, np.ndarray]] = {}

    def score(self, measure: Measure, alpha: float) -> np.ndarray:
        column = measure.k - 1 if measure.k else 0
        family = measure.family
        if family == "StRecall":
            covered = self.ranked[:, : measure.k].any(axis=1).sum(axis=1)
            return ratio_or_zero(covered.astype(float), self.intents)
        if family == "P_IA":
            hits = self.ranked[:, : measure.k].sum(axis=(1, 2))
            return ratio_or_zero(hits.astype(float), self.intents * measure.k)
        dcg, err = self._cumulative(alpha, ideal=False)
        run = (dcg if family in ("alpha_DCG", "alpha_nDCG") else err)[:, column]
        normalised = self._normalised(run, alpha, column, err=family in ("ERR_IA", "nERR_IA"))
        if family in ("alpha_DCG", "ERR_IA"):
            return normalised
        ideal_dcg, ideal_err = self._cumulative(alpha, ideal=True)
        ideal = (ideal_dcg if family == "alpha_nDCG" else ideal_err)[:, column]
        ideal_normalised = self._normalised(ideal, alpha, column, err=family == "nERR_IA")
        # ndeval divides only where the run's α-DCG is not 0 (its ideal is then not 0 either).
        out = np.zeros(normalised.shape)
        np.divide(normalised, ideal_normalised, out=out, where=dcg[:, column] != 0)
        return out

    def _cumulative(self, alpha: float, *, ideal: bool) -> tuple[np.ndarray, np.ndarray]:
        """Raw cumulative α-DCG and ERR (undivided) at each rank, of the run or of the greedy ideal."""
        key = (alpha, ideal)
        if key not in self._cache:
            if ideal:
                gains = _ideal_gains(self.judged, self.depth, 1.0 - alpha)
            else:
                gains = _gains(self.ranked, 1.0 - alpha)
            ranks = np.arange(1, self.depth + 1, dtype=float)
            self._cache[key] = (
                np.cumsum(gains * _discounts(self.depth), axis=1),
                np.cumsum(gains / ranks, axis=1),
            )
        return self._cache[key]

    def _normalised(self, values: np.ndarray, alpha: float, column: int, *, err: bool) -> np.ndarray:
        """Divided by the "ideal ideal" (rank 1 left as it is, as ndeval does); 0 where S is 0."""
        if column == 0:
            return values.copy()  # a copy: `values` is a view of the shared cumulative sums
        # S · (1 − α)^(i−1) with the factor multiplied in one rank at a time, then discounted, as ndeval.
        factors = np.full((len(self.intents), column + 1), 1.0 - alpha)
        factors[:, 0] = self.intents
        gains = np.cumprod(factors, axis=1)
        if err:
            gains /= np.arange(1, column + 2, dtype=float)
        else:
            gains *= _discounts(column + 1)
        return ratio_or_zero(values, gains.cumsum(axis=1)[:, column])


def _gains(ranked: np.ndarray, decay: float) -> np.ndarray:
    """`[queries × depth]` each rank's novelty-discounted gain Σ_j rel_ij · decay^c_ij."""
    n_queries, depth, n_intents = ranked.shape
    intent_gain = np.ones((n_queries, n_intents))
    gains = np.zeros((n_queries, depth))
    for rank in range(depth):
        relevant = ranked[:, rank]
        gains[:, rank] = _summed(relevant, intent_gain)
        intent_gain = np.where(relevant, intent_gain * decay, intent_gain)
    return gains


def _summed(relevant: np.ndarray, intent_gain: np.ndarray) -> np.ndarray:
    """Σ_j relevant[..., j] · intent_gain[..., j], added intent by intent in order (ndeval's order: the
    greedy ideal compares these sums exactly)."""
    total = np.zeros(relevant.shape[:-1])
    for intent in range(relevant.shape[-1]):
        total += np.where(relevant[..., intent], intent_gain[..., intent], 0.0)
    return total


def _ideal_gains(judged: np.ndarray, depth: int, decay: float) -> np.ndarray:
    """`[queries × depth]` the gains of ndeval's greedy ideal ranking of each query's judged documents.

    Only documents relevant to some intent can gain, so the others are left out (they would only be taken
    once every gain left is 0). Queries go in blocks of similar counts of such documents, each block as wide
    as its widest query."""
    n_queries = judged.shape[0]
    useful = np.any(judged, axis=2)
    counts = useful.sum(axis=1)
    gains = np.zeros((n_queries, depth))
    by_count = np.argsort(counts, kind="stable")
    for start in range(0, n_queries, _QUERY_BLOCK):
        block = by_count[start : start + _QUERY_BLOCK]
        width = int(counts[block].max()) if block.size else 0
        if width == 0:
            continue
        # Each query's useful documents first, in their order (a stable sort), cut at the block's widest.
        kept = np.argsort(~useful[block], axis=1, kind="stable")[:, :width]
        documents = np.take_along_axis(judged[block], kept[:, :, None], axis=1)
        available = np.take_along_axis(useful[block], kept, axis=1)
        gains[block] = _greedy(documents, available, depth, decay)
    return gains


def _greedy(documents: np.ndarray, available: np.ndarray, depth: int, decay: float) -> np.ndarray:
    """Takes, rank after rank, the available document of largest gain (ties: the later one)."""
    n_queries, width, n_intents = documents.shape
    rows = np.arange(n_queries)
    intent_gain = np.ones((n_queries, n_intents))
    gains = np.zeros((n_queries, depth))
    for rank in range(min(depth, width)):
        scores = _summed(documents, intent_gain[:, None, :])
        scores[~available] = -np.inf
        # argmax finds the first largest; on the reversed row, the last.
        taken = width - 1 - scores[:, ::-1].argmax(axis=1)
        found = available[rows, taken]
        gains[:, rank] = np.where(found, scores[rows, taken], 0.0)
        relevant = documents[rows, taken] & found[:, None]
        intent_gain = np.where(relevant, intent_gain * decay, intent_gain)
        available[rows, taken] = False
    return gains


def intra_list_similarity(
    attributes: ArrayLike,
    k: int,
    *,
    lengths: ArrayLike | None = None,
    near_duplicates: ArrayLike | None = None,
) -> np.ndarray:
    """ILS@k of each query: the mean similarity of the pairs of documents in its top k.

    `attributes`: `[queries × depth × fields]` integer codes of each document's categorical attributes
    (category, brand, author...), one column per field, equal codes for equal values, -1 where the document
    has no value for the field. `lengths`: the number of documents in each list (default: all `depth`).
    `near_duplicates`: `[queries × depth × depth]` bool, True where two documents of the list were marked
    near-duplicates (either way round).

        sim(a, b) = 1 when a and b are near-duplicates; else the share of the fields both have values for
                    on which the values are equal (simple matching over shared fields), 0 when they share
                    no field
        ILS@k     = Σ_{i < j ≤ n} sim(d_i, d_j) / (n (n − 1) / 2), n = min(k, length of the list)

    A list of fewer than two documents has no pair and scores 0. ILS is in [0, 1], higher is more alike
    (less diverse), and does not depend on the order within the top k. Ziegler et al. (WWW 2005) define it
    as the sum over pairs; the mean keeps lists of different lengths comparable.
    """
    attributes = np.asarray(attributes)
    if attributes.ndim != 3 or not np.issubdtype(attributes.dtype, np.integer):
        raise ValueError(
            "attributes must be a [queries × depth × fields] integer array,"
            f" got {attributes.dtype} {attributes.shape}"
        )
    _check_k(k)
    n_queries, depth, _ = attributes.shape
    sizes = _lengths(lengths, n_queries, depth)
    if near_duplicates is not None:
        near_duplicates = np.asarray(near_duplicates)
        if near_duplicates.shape != (n_queries, depth, depth) or near_duplicates.dtype != bool:
            raise ValueError(
                "near_duplicates must be a [queries × depth × depth] bool array"
                f" of shape {(n_queries, depth, depth)}"
            )
    width = min(k, depth)
    n = np.minimum(sizes, width)
    pairs = (n * (n - 1) / 2).astype(float)
    upper = np.triu(np.ones((width, width), dtype=bool), 1)
    out = np.zeros(n_queries)
    # Blocks of queries whose pairwise temporaries stay around a few million entries.
    block = max(1, (1 << 22) // max(width * width * attributes.shape[2], 1))
    for start in range(0, n_queries, block):
        part = slice(start, start + block)
        codes = attributes[part, :width]
        present = codes >= 0
        shared = present[:, :, None, :] & present[:, None, :, :]
        equal = (codes[:, :, None, :] == codes[:, None, :, :]) & shared
        similarity = ratio_or_zero(equal.sum(axis=3).astype(float), shared.sum(axis=3).astype(float))
        if near_duplicates is not None:
            marked = near_duplicates[part, :width, :width]
            similarity[marked | marked.transpose(0, 2, 1)] = 1.0
        inside = np.arange(width) < n[part, None]
        counted = upper & inside[:, :, None] & inside[:, None, :]
        out[part] = np.where(counted, similarity, 0.0).sum(axis=(1, 2))
    return ratio_or_zero(out, pairs)


def near_duplicate_groups(near_duplicates: ArrayLike) -> np.ndarray:
    """`[queries × n]` group numbers from pairwise near-duplicate marks `[queries × n × n]` (either way round
    counts), as `evaluate_ranked`'s `duplicate_groups` takes them: every chain of marks is one group (A like
    B and B like C puts all three together), numbered by its first document's index; -1 for a document
    marked with none."""
    marks = np.asarray(near_duplicates)
    if marks.ndim != 3 or marks.shape[1] != marks.shape[2] or marks.dtype != bool:
        raise ValueError(
            f"near_duplicates must be a [queries × n × n] bool array, got {marks.dtype} {marks.shape}"
        )
    n = marks.shape[1]
    linked = marks | marks.transpose(0, 2, 1)
    marked = linked.any(axis=2)
    linked |= np.eye(n, dtype=bool)
    # Each document takes the smallest number among its neighbours until nothing changes (at most n rounds).
    groups = np.broadcast_to(np.arange(n), marks.shape[:2]).copy()
    while True:
        smallest = np.where(linked, groups[:, None, :], n).min(axis=2)
        if np.array_equal(smallest, groups):
            break
        groups = smallest
    return np.where(marked, groups, -1)


def novelty(popularity: ArrayLike, k: int) -> np.ndarray:
    """Novelty@k of each query: the mean self-information −log2(popularity) of its top k documents.

    `popularity`: `[queries × depth]` each document's popularity as a probability in (0, 1] (e.g. the share
    of users or sessions that interacted with it; smooth counts so that none is 0), NaN where it is unknown
    and past the end of a list. Documents of unknown popularity are left out of the mean; a query with none
    known in its top k scores NaN (no figure). Novelty is ≥ 0 bits, higher for less popular documents, and
    does not depend on the order within the top k (Vargas and Castells, RecSys 2011).
    """
    popularity = np.asarray(popularity, dtype=float)
    if popularity.ndim != 2:
        raise ValueError(f"popularity must be a [queries × depth] array, got shape {popularity.shape}")
    _check_k(k)
    top = popularity[:, :k]
    known = ~np.isnan(top)
    if not ((top[known] > 0) & (top[known] <= 1)).all():
        raise ValueError("popularity must be a probability in (0, 1], or NaN where unknown")
    # 0 − log2: a popularity of 1 gives 0 bits, not −0.
    information = np.where(known, np.subtract(0.0, np.log2(np.where(known, top, 1.0))), 0.0)
    counts = known.sum(axis=1).astype(float)
    out = np.full(popularity.shape[0], np.nan)
    np.divide(information.sum(axis=1), counts, out=out, where=counts > 0)
    return out


def _check_k(k: int) -> None:
    if isinstance(k, bool) or not isinstance(k, int | np.integer) or k < 1:
        raise ValueError(f"k must be a whole number of at least 1, got {k!r}")


def _lengths(lengths: ArrayLike | None, n_queries: int, depth: int) -> np.ndarray:
    if lengths is None:
        return np.full(n_queries, depth)
    sizes = np.asarray(lengths)
    if sizes.shape != (n_queries,) or not np.issubdtype(sizes.dtype, np.integer) or (sizes < 0).any():
        raise ValueError(f"lengths must be {n_queries} whole numbers ≥ 0, one per query")
    return np.minimum(sizes, depth)
