"""Digests of inputs tell apart every value, type and shape, and refuse what they cannot read whole."""

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from annotation.models import Campaign
from plumbing.digests import inputs_digest, sources_digest


@dataclass(frozen=True)
class Pair:
    left: object
    right: object


def test_equal_inputs_give_equal_digests_and_any_difference_another():
    same = [
        (np.arange(3), np.arange(3)),
        (
            Pair(np.array(["a", "b"], dtype=object), {1: [("x", 2.5)]}),
            Pair(np.array(["a", "b"], dtype=object), {1: [("x", 2.5)]}),
        ),
    ]
    for first, second in same:
        assert inputs_digest(first) == inputs_digest(second)
    different = [
        (np.arange(3), np.arange(3, dtype=np.int32)),  # dtype
        (np.zeros((2, 3)), np.zeros((3, 2))),  # shape
        (np.array([1.0, np.nan]), np.array([1.0, 2.0])),
        ({1: "a"}, {"1": "a"}),  # JSON would write both alike
        ([1, 2], (1, 2)),
        (Pair(1, 2), Pair(2, 1)),
        (["a", "b"], ["ab"]),
        (np.array(["a", "b"], dtype=object), np.array(["ab", ""], dtype=object)),
        (np.array(["1", "2"], dtype=object), np.array([1, 2], dtype=object)),
        (np.array(["a", None], dtype=object), np.array(["a", "None"], dtype=object)),  # not text: walked
        (np.array(["é", "\ud800"], dtype=object), np.array(["e", "\ud800"], dtype=object)),
        (np.array([["a"], ["b"]], dtype=object), np.array([["ab"], [""]], dtype=object)),
        ([np.arange(2), 1], [np.arange(3), 1]),  # a list of arrays is walked, not printed in short
    ]
    for first, second in different:
        assert inputs_digest(first) != inputs_digest(second), (first, second)
    assert inputs_digest(1, 2) != inputs_digest(12) != inputs_digest((1, 2))


@given(st.lists(st.text(max_size=4), min_size=1, max_size=6), st.data())
def test_arrays_of_text_cut_elsewhere_have_other_digests(items: list, data):
    """Text arrays are digested by their lengths and their joined text: the same text cut into as many
    pieces elsewhere is another array, and another digest."""
    joined = "".join(items)
    cuts = sorted(
        data.draw(st.lists(st.integers(0, len(joined)), min_size=len(items) - 1, max_size=len(items) - 1))
    )
    other = [joined[start:end] for start, end in zip([0, *cuts], [*cuts, len(joined)], strict=True)]
    digests = [inputs_digest(np.array(pieces, dtype=object)) for pieces in (items, other)]
    assert (digests[0] == digests[1]) == (items == other)


def test_a_model_instance_is_digested_by_every_column():
    campaign = Campaign(pk=1, name="c")
    before = inputs_digest(campaign)
    campaign.launch_min_gsb += 0.01
    assert inputs_digest(campaign) != before


def test_a_type_it_cannot_read_whole_is_refused():
    with pytest.raises(TypeError, match="no digest of object"):
        inputs_digest([object()])
    with pytest.raises(TypeError, match="no digest of set"):
        inputs_digest({"a", "b"})  # its order differs between processes


def test_the_sources_digest_changes_with_any_file(tmp_path: Path):
    (tmp_path / "a.py").write_text("x = 1\n")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "b.py").write_text("y = 2\n")
    before = sources_digest([tmp_path])
    assert sources_digest([tmp_path]) == before
    (tmp_path / "sub" / "b.py").write_text("y = 3\n")
    assert sources_digest([tmp_path]) != before
