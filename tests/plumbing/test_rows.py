"""Plain-SQL reads (`plumbing.rows`) give the instances and pages the ORM would, on either database."""

import pytest
from django.contrib.auth import get_user_model
from django.db import connection
from django.db.models.signals import post_init
from django.test.utils import CaptureQueriesContext
from psycopg import _queries

from annotation.models import Assignment, Campaign, Document, RelevanceTask, SideBySideTask
from annotation.roles import RolesBackend, can_annotate, can_manage, can_review
from annotation.selectors.rankings import side_by_side_lists
from annotation.selectors.task_page import OwnProgress, task_view
from annotation.selectors.workbench import assignment_get, assignment_of
from annotation.services.assignment import task_next, task_skip
from annotation.services.labels import judgment_submit
from plumbing import rows
from tests.factories import field_values


def read(model, pk):
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT {rows.select_list(model, 't')} FROM {model._meta.db_table} t WHERE t.id = %s", [pk]
        )
        row = cursor.fetchone()
    instance, end = rows.instance_at(model, row)
    assert end == len(row)
    return instance


@pytest.mark.parametrize("model", [Campaign, Document, RelevanceTask, SideBySideTask])
def test_an_instance_holds_what_the_orm_reads(campaign, model):
    """JSON (the scale, the cutoffs), dates, booleans and decimals come back converted, as the ORM's."""
    stored = model.objects.order_by("pk").first()
    instance = read(model, stored.pk)
    assert type(instance) is model
    assert field_values(instance) == field_values(model.objects.get(pk=stored.pk))
    assert instance._state.adding is False and instance._state.db == "default"
    if model is Campaign:
        assert isinstance(instance.scale, list) and isinstance(instance.cutoffs, list)


@pytest.mark.parametrize("model", [Campaign, Document, Assignment])
def test_an_instance_is_the_one_from_db_builds(campaign, make_user, model):
    """Built without `Model.__init__`, the instance is `from_db`'s: the same values, deferred fields, state,
    and it saves as an update of its row."""
    task_next(annotator=make_user("a1", "annotator"), campaign=campaign)
    stored = model.objects.order_by("pk").first()
    attnames = tuple(field.attname for field in model._meta.concrete_fields)
    values = [getattr(stored, name) for name in attnames]
    pairs = [(attnames, values), (attnames[:1] + attnames[3:], values[:1] + values[3:])]
    for names, row in pairs:
        built, expected = rows.instance_of(model, names, row), model.from_db("default", names, row)
        assert type(built) is model
        assert {k: v for k, v in vars(built).items() if k != "_state"} == {
            k: v for k, v in vars(expected).items() if k != "_state"
        }
        assert built.get_deferred_fields() == expected.get_deferred_fields()
        assert (built._state.adding, built._state.db) == (False, "default")
    # A deferred field loads on first use, as from the ORM; a save updates the row rather than adding one.
    assert getattr(built, attnames[1]) == values[1]
    count = model.objects.count()
    built.save()
    assert model.objects.count() == count


def test_an_instance_is_built_by_from_db_while_something_listens_to_its_init(campaign):
    seen = []

    def listener(sender, instance, **kwargs):
        seen.append(instance)

    stored = Document.objects.order_by("pk").first()
    attnames = tuple(field.attname for field in Document._meta.concrete_fields)
    values = [getattr(stored, name) for name in attnames]
    post_init.connect(listener, sender=Document)
    try:
        built = rows.instance_of(Document, attnames, values)
    finally:
        post_init.disconnect(listener, sender=Document)
    assert seen == [built]
    rows.instance_of(Document, attnames, values)
    assert seen == [built]


def test_an_assignment_comes_with_its_campaign_and_task_in_one_statement(campaign, make_user):
    annotator = make_user("a1", "annotator")
    other = make_user("a2", "annotator")
    lease = task_next(annotator=annotator, campaign=campaign)
    with CaptureQueriesContext(connection) as context:
        found = assignment_get(annotator=annotator, campaign_id=campaign.pk, pk=lease.pk)
        assert found.task.campaign is found.campaign
        assert found.annotator is annotator
    assert len(context.captured_queries) == 1
    assert field_values(found) == field_values(Assignment.objects.get(pk=lease.pk))
    assert field_values(found.campaign) == field_values(campaign)
    assert field_values(found.task) == field_values(type(found.task).objects.get(pk=found.task.pk))
    assert assignment_get(annotator=other, campaign_id=campaign.pk, pk=lease.pk) is None
    assert assignment_get(annotator=annotator, campaign_id=campaign.pk + 1, pk=lease.pk) is None
    assert assignment_of(annotator=annotator, pk=lease.pk).pk == lease.pk
    assert assignment_of(annotator=other, pk=lease.pk) is None


def test_the_task_page_of_each_kind(campaign, make_user):
    """A relevance page shows its document and the scale's keys; a side-by-side page both lists, the sides as
    the lease drew them; done, skipped and the way back count the annotator's own rows."""
    annotator = make_user("a1", "annotator")
    campaign.task_order = "relevance_first"
    first = task_next(annotator=annotator, campaign=campaign)
    judgment_submit(annotator=annotator, task=first.task, grade=2)
    second = task_next(annotator=annotator, campaign=campaign)
    task_skip(annotator=annotator, assignment=second, reason="cant_load")
    third = task_next(annotator=annotator, campaign=campaign)
    view = task_view(assignment=assignment_get(annotator=annotator, campaign_id=campaign.pk, pk=third.pk))
    task = third.task
    assert view.query.text == task.query.text
    assert view.document.title == (task.document.title or "(no title)")
    assert view.document.body == task.document.body
    assert [grade.key for grade in view.scale] == [str(grade["value"]) for grade in campaign.scale]
    assert view.progress == OwnProgress(done=1, skipped=1)
    assert view.previous_id == first.pk
    assert view.current is None
    done = task_view(assignment=assignment_get(annotator=annotator, campaign_id=campaign.pk, pk=first.pk))
    assert done.current.grade == 2

    campaign.task_order = "side_by_side_first"
    second_annotator = make_user("a2", "annotator")
    side_by_side = task_next(annotator=second_annotator, campaign=campaign)
    assert side_by_side.side_by_side_task_id
    view = task_view(assignment=assignment_of(annotator=second_annotator, pk=side_by_side.pk))
    experimental, online = side_by_side_lists(task=side_by_side.task, depth=campaign.gsb_depth)
    expected = (experimental, online) if side_by_side.experimental_on_left else (online, experimental)
    for shown, documents in zip((view.left, view.right), expected, strict=True):
        assert [document.body for document in shown] == [document.body for document in documents]
        assert 0 < len(shown) <= campaign.gsb_depth


def test_a_signed_in_user_comes_with_their_roles_in_one_statement(make_user):
    backend = RolesBackend()
    manager = make_user("m1", "manager", "annotator")
    with CaptureQueriesContext(connection) as context:
        user = backend.get_user(str(manager.pk))  # the session keeps the key as text
        assert can_manage(user) and can_annotate(user) and can_review(user)
    assert len(context.captured_queries) == 1
    assert field_values(user) == field_values(get_user_model().objects.get(pk=manager.pk))
    plain = backend.get_user(make_user("u1").pk)
    assert plain is not None and not can_annotate(plain) and not can_review(plain)


def test_an_unknown_inactive_or_malformed_user_is_nobody(make_user):
    backend = RolesBackend()
    gone = make_user("gone", "annotator")
    gone.is_active = False
    gone.save()
    assert backend.get_user(gone.pk) is None
    assert backend.get_user(10**9) is None
    assert backend.get_user("not a number") is None


@pytest.mark.skipif(connection.vendor != "postgresql", reason="psycopg converts placeholders on PostgreSQL")
def test_a_long_statement_is_converted_once(db):
    """The round trip's lease statement is longer than psycopg keeps converted by default (4 KB)."""
    statement = "SELECT %(one)s " + "-- padding\n" * 800  # 8.8 KB
    assert len(statement) > 4096
    with connection.cursor() as cursor:
        cursor.execute(statement, {"one": 1})
        hits = _queries._query2pg_client.cache_info().hits
        cursor.execute(statement, {"one": 1})
        assert cursor.fetchone() == (1,)
    assert _queries._query2pg_client.cache_info().hits == hits + 1


class _TrackedDocument(Document):
    """A model that does more when loaded: `instance_of` leaves it to its own `from_db`."""

    class Meta:
        proxy = True
        app_label = "annotation"

    @classmethod
    def from_db(cls, db, field_names, values, **kwargs):
        instance = super().from_db(db, field_names, values, **kwargs)
        instance.loaded_title = instance.title
        return instance


def test_a_model_with_its_own_from_db_is_built_by_it(campaign):
    stored = Document.objects.order_by("pk").first()
    attnames = tuple(field.attname for field in Document._meta.concrete_fields)
    built = rows.instance_of(_TrackedDocument, attnames, [getattr(stored, name) for name in attnames])
    assert type(built) is _TrackedDocument and built.loaded_title == stored.title
