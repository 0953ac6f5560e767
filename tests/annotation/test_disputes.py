"""The review queue's order, without a database."""

from annotation.disputes import grade_dispute, queue_rank, verdict_dispute


def test_grade_dispute_is_the_spread_over_the_scales_range():
    assert grade_dispute(1, 1, [0, 1, 2, 3]) == 0
    assert grade_dispute(0, 3, [0, 1, 2, 3]) == 1
    assert grade_dispute(-1, 1, [-1, 0, 1, 2]) == 2 / 3
    assert grade_dispute(0, 0, [0]) == 0  # a one-grade scale cannot be disputed


def test_verdict_dispute_is_the_spread_over_bad_to_good():
    assert verdict_dispute(3, 0, 0) == 0 and verdict_dispute(0, 0, 0) == 0
    assert verdict_dispute(1, 1, 0) == 0.5 and verdict_dispute(0, 2, 1) == 0.5
    assert verdict_dispute(1, 0, 1) == 1 and verdict_dispute(5, 5, 1) == 1


def test_most_disputed_first_then_failed_gold_then_kind_and_id():
    rows = [
        {"dispute": 0.5, "failed_gold": False, "kind": "relevance", "task_pk": 2},
        {"dispute": 0.5, "failed_gold": True, "kind": "side_by_side", "task_pk": 9},
        {"dispute": 1.0, "failed_gold": False, "kind": "side_by_side", "task_pk": 5},
        {"dispute": 0.5, "failed_gold": False, "kind": "relevance", "task_pk": 1},
    ]
    ordered = sorted(rows, key=lambda row: queue_rank(**row))
    assert [row["task_pk"] for row in ordered] == [5, 9, 1, 2]
