from annotation.list_changes import Change, Move, list_changes


def test_moves_entries_and_exits_by_hand():
    moves, kept = list_changes(["a", "b", "c", "d"], ["c", "a", "e", "b"])
    assert moves == [
        Move(Change.UP, 2, 3),  # c: 3rd, now 1st
        Move(Change.DOWN, 1, 1),  # a: 1st, now 2nd
        Move(Change.NEW),  # e entered
        Move(Change.DOWN, 2, 2),  # b: 2nd, now 4th
    ]
    assert [move.change for move in kept] == [Change.DOWN, Change.DOWN, Change.UP, Change.LEFT]
    assert kept[3] == Move(Change.LEFT, before=4)


def test_identical_and_empty_lists():
    moves, kept = list_changes(["a", "b"], ["a", "b"])
    assert [move.change for move in moves + kept] == [Change.SAME] * 4
    assert list_changes([], ["a"]) == ([Move(Change.NEW)], [])
    assert list_changes(["a"], []) == ([], [Move(Change.LEFT, before=1)])
