"""Serializers whose fields are built and bound once per class: each response still shows its own task,
nested lists included, as DRF's own serializers would; a class never takes another's fields, and none takes
a context or is partial (its shared fields would not see them)."""

import itertools
from collections import Counter
from datetime import UTC, datetime
from types import SimpleNamespace

import pytest
from rest_framework import serializers
from rest_framework.renderers import JSONRenderer

from annotation.api.serializers.campaigns import GradeSerializer
from annotation.api.serializers.requests import LabelRequestSerializer
from annotation.api.serializers.tasks import LabelSerializer, TaskGradeSerializer, TaskSerializer
from annotation.bundle import parse_bundle
from annotation.models import Assignment
from annotation.services.campaigns import campaign_import
from plumbing.serializers import FieldsOnceSerializer
from tests.factories import SMALL_BUNDLE


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
    assert TaskGradeSerializer().fields is TaskGradeSerializer().fields
    with pytest.raises(TypeError):
        LabelRequestSerializer(data={}, context={"request": None})
    with pytest.raises(TypeError):
        LabelRequestSerializer(data={}, partial=True)


def walked_bundle() -> dict:
    """Twelve queries, the first with intents; both kinds interleaved, 5-point verdicts, a third repeated."""
    data = {**SMALL_BUNDLE, "name": "Walked"}
    data["settings"] = {
        **SMALL_BUNDLE["settings"],
        "overlap": 1,
        "gsb_overlap": 1,
        "gsb_scale": 5,
        "repeat_rate": 0.34,
        "task_order": "interleaved",
    }
    data["queries"] = [{"id": f"q{i}", "text": f"query {i}", "description": f"about {i}"} for i in range(12)]
    data["queries"][0]["intents"] = [{"id": "buy", "text": "to buy"}, {"id": "read", "text": "to read"}]
    data["rankings"] = [
        {"model": model, "query": f"q{i}", "documents": documents}
        for i in range(12)
        for model, documents in (("online", ["d1", "d2", "d3"]), ("exp", ["d1", "d3", "d4"]))
    ]
    return data


def test_shared_fields_answer_as_drfs_own(db, monkeypatch, client_for):
    """Every task and label an annotator's walk answers with (relevance and side by side, repeats, labels
    with and without comments, intents, marks and strengths, changed labels) is, to the byte, what DRF makes
    of the same instance with fields of the serializer's own and its own loop, at every level of nesting."""
    renderer, seen = JSONRenderer(), Counter()

    plain = FieldsOnceSerializer.to_representation  # its nested fields call `both` in turn

    def both(serializer, instance):
        shared = plain(serializer, instance)
        own = type("Own", (type(serializer),), {"fields": serializers.Serializer.__dict__["fields"]})()
        assert "fields" not in vars(own)
        standard = serializers.Serializer.to_representation(own, instance)  # nested ones: `both` again
        assert own.fields is not serializer.fields and vars(own)["fields"]
        assert renderer.render(shared) == renderer.render(standard), type(serializer).__name__
        seen[type(serializer).__name__] += 1
        return shared

    monkeypatch.setattr(FieldsOnceSerializer, "to_representation", both, raising=False)
    campaign = campaign_import(bundle=parse_bundle(walked_bundle(), "walked.json"))
    annotator = client_for("walker", "annotator")
    task = annotator.post(f"/api/campaigns/{campaign.pk}/next-task/").json()
    answered = []
    for n in itertools.count():
        if task is None:
            break
        if task["kind"] == "relevance":
            label = {"grade": n % 4, **({"intents": ["read"]} if task["query"]["intents"] else {})}
        else:
            label = {
                "verdict": ("left", "same", "right")[n % 3],
                "duplicates": [["left", 2, 1]] if n % 2 else [],
            }
            label.update({"strength": 1 + n % 2} if label["verdict"] != "same" else {})
        label.update({"comment": f"because {n}"} if n % 3 else {})
        url = f"/api/tasks/{task['id']}/judgment/"
        if n % 4 == 3:  # the two-request path
            assert annotator.post(url, label, format="json").status_code in (200, 201)
            answer = annotator.post(f"/api/campaigns/{campaign.pk}/next-task/")
            task = answer.json() if answer.status_code == 200 else None
        else:
            task = annotator.post(f"{url}?next=true", label, format="json").json()["next"]
        answered.append(annotator.get(f"/api/tasks/{url.split('/')[3]}/").json())  # with its current label
    changed = {**label, "comment": "changed"}
    assert (
        annotator.post(f"/api/tasks/{answered[-1]['id']}/judgment/", changed, format="json").status_code
        == 200
    )
    kinds = {task["kind"] for task in answered}
    assert kinds == {"relevance", "side_by_side"} and all(task["current"] for task in answered)
    assert seen["TaskSerializer"] > 20 and seen["LabelSerializer"] > 10 and seen["TaskIntentSerializer"]
    assert seen["CurrentLabelSerializer"] and seen["TaskGradeSerializer"] and seen["TaskDocumentSerializer"]
    assert Assignment.objects.filter(repeat=True, finished_at__isnull=False).count() > 2


class Edges(FieldsOnceSerializer):
    """Each way DRF reads a field's value that the plain `getattr` must leave to it."""

    plain = serializers.CharField()
    missing_optional = serializers.CharField(required=False)
    missing_with_default = serializers.CharField(required=False, default="fallback")
    missing_nullable = serializers.CharField(allow_null=True)
    nothing = serializers.CharField(allow_null=True)
    method = serializers.CharField()
    dotted = serializers.CharField(source="inner.text")
    whole = serializers.CharField(source="*")
    gone = serializers.IntegerField(allow_null=True)
    written = serializers.CharField(write_only=True)
    child = TaskGradeSerializer(required=False)


class _Gone:
    @property
    def gone(self):
        raise Assignment.DoesNotExist

    def __str__(self):
        return "the whole"


def test_the_plain_reads_answer_as_drfs_loop():
    def drf(instance):
        return serializers.Serializer.to_representation(Edges(), instance)

    instance = _Gone()
    instance.plain, instance.nothing, instance.method = "p", None, lambda: "called"
    instance.inner = SimpleNamespace(text="deep")
    instance.child = SimpleNamespace(value=1, label="ok", description="", key="1")
    mapping = {"plain": "p", "nothing": None, "method": "m", "inner": {"text": "deep"}, "gone": 3}
    for shown in (instance, mapping):
        assert Edges(shown).data == drf(shown)
    assert Edges(instance).data == {
        "plain": "p",
        "missing_with_default": "fallback",
        "missing_nullable": None,
        "nothing": None,
        "method": "called",
        "dotted": "deep",
        "whole": "the whole",
        "gone": None,
        "child": {"value": 1, "label": "ok", "description": "", "key": "1"},
    }
    with pytest.raises(AttributeError):
        _ = Edges(SimpleNamespace()).data  # a required field missing: DRF's message
