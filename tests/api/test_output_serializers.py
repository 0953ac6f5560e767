"""Response serializers built once per class: each response still shows its own task, nested lists included,
and a class never takes another's fields."""

from datetime import UTC, datetime
from types import SimpleNamespace

from annotation.api.serializers import (
    GradeSerializer,
    LabelSerializer,
    TaskGradeSerializer,
    TaskSerializer,
)


def document(title: str) -> SimpleNamespace:
    return SimpleNamespace(
        title=title, url=f"https://example.com/{title}", is_link=True, body=f"about {title}"
    )


def task(kind: str, n: int, **shown) -> SimpleNamespace:
    return SimpleNamespace(
        assignment_id=n,
        kind=kind,
        status="leased",
        expires_at=datetime(2026, 11, 26, n, tzinfo=UTC),
        campaign=SimpleNamespace(id=1, name="c", guidelines=""),
        query=SimpleNamespace(
            text=f"query {n}",
            description="",
            intents=[SimpleNamespace(id=f"i{n}", text="an aspect", key="a")],
        ),
        current=None,
        version=f"v{n}",
        progress=SimpleNamespace(done=n, skipped=0),
        **shown,
    )


def test_each_response_shows_its_own_task():
    side_by_side = task(
        "side_by_side", 1, left=[document("a"), document("b")], right=[document("c")], five_point=False
    )
    relevance = task(
        "relevance",
        2,
        document=document("d"),
        scale=[SimpleNamespace(value=0, label="bad", description="", key="0")],
    )
    first = TaskSerializer(side_by_side).data
    second = TaskSerializer(relevance).data
    assert [d["title"] for d in first["left"]] == ["a", "b"] and first["right"][0]["title"] == "c"
    assert first["query"]["text"] == "query 1" and first["progress"]["done"] == 1
    assert second["document"]["title"] == "d" and second["scale"][0]["key"] == "0"
    assert second["query"]["text"] == "query 2" and "left" not in second
    assert [i["id"] for i in first["query"]["intents"]] == ["i1"]
    assert [i["id"] for i in second["query"]["intents"]] == ["i2"]
    assert TaskSerializer(side_by_side).data == first

    label = LabelSerializer({"id": 2, "kind": "relevance", "grade": 1, "comment": "", "next": side_by_side})
    assert label.data["next"] == first
    assert (
        LabelSerializer({"id": 3, "kind": "relevance", "grade": 0, "comment": "", "next": None}).data["next"]
        is None
    )


def test_a_class_keeps_its_own_fields():
    shown = TaskGradeSerializer(SimpleNamespace(value=1, label="ok", description="", key="1")).data
    assert shown["key"] == "1"
    assert "key" in TaskGradeSerializer().fields
    assert "key" not in GradeSerializer().fields
