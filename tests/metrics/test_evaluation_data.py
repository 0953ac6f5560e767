"""The report's reads in columns: how a campaign's query ids become indices."""

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from metrics.selectors.evaluation_data import CampaignQueries


def queries_of(pk: np.ndarray) -> CampaignQueries:
    blank = np.full(pk.size, "", dtype=object)
    return CampaignQueries(pk=pk, external_id=blank, text=blank, segment=blank, weight=np.ones(pk.size))


@given(
    first=st.integers(1, 10**12),
    steps=st.lists(st.integers(1, 3), max_size=40),
    asked=st.lists(st.integers(-5, 130), max_size=60),
)
def test_query_indices_are_the_binary_searchs_with_or_without_gaps(first, steps, asked):
    # Ids without a gap (steps of 1) take the subtraction; any gap, and any id outside the campaign's,
    # must still give what the search gives.
    pk = np.cumsum([first, *steps]).astype(np.int64)
    pks = np.array([first + offset for offset in asked], dtype=np.int64)
    queries = queries_of(pk)
    assert queries.index_of(pks).tolist() == np.searchsorted(pk, pks).tolist()
    shuffled = np.random.default_rng(len(asked)).permutation(pk)
    assert queries.index_of(shuffled).tolist() == np.searchsorted(pk, shuffled).tolist()


def test_a_campaign_without_queries_indexes_nothing():
    queries = queries_of(np.zeros(0, dtype=np.int64))
    assert queries.index_of(np.array([5], dtype=np.int64)).tolist() == [0]
    assert queries.index_of(np.zeros(0, dtype=np.int64)).size == 0
