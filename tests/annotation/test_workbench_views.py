"""The workbench pages: PRG flow, roles, escaping, and no model names in what annotators see."""

import re
from datetime import timedelta

import pytest
from django.contrib.messages import get_messages
from django.http import QueryDict
from django.template import Context, Template
from django.template.defaultfilters import truncatechars
from django.urls import reverse
from django.utils.html import escape
from hypothesis import given
from hypothesis import strategies as st

from annotation.bundle import parse_bundle
from annotation.forms import LabelForm
from annotation.models import Assignment, Campaign, Document, GSBScale, Judgment, Preference, Query
from annotation.selectors.task_page import CurrentGrade, GradeChoice, ListedDocument
from annotation.services.assignment import task_next
from annotation.services.campaigns import campaign_archive, campaign_import
from annotation.services.exclusions import annotator_exclude
from annotation.services.labels import judgment_submit
from annotation.services.people import campaign_members_set
from annotation.templatetags.workbench import grade_buttons, result_list, truncated


@pytest.fixture
def annotator(client, make_user):
    user = make_user("ann", "annotator")
    client.force_login(user)
    return user


def work_url(campaign):
    return reverse("annotation:work", args=[campaign.pk])


def test_healthz(client):
    assert client.get("/healthz").content == b"ok"


def test_home_lists_own_progress_with_start(client, annotator, campaign):
    response = client.get(reverse("annotation:home"))
    assert response.status_code == 200
    assert work_url(campaign).encode() in response.content
    row, summary = response.context["campaigns"][0]
    assert row.remaining == 9 and summary is None  # an annotator sees no team figures


def test_work_requires_annotator_role(client, make_user, campaign):
    client.force_login(make_user("rev", "reviewer"))
    assert client.get(work_url(campaign)).status_code == 403


def test_grade_post_redirects_to_next_task(client, annotator, campaign):
    response = client.get(work_url(campaign))
    task = response.context["task"]
    assert response.status_code == 200 and task.kind == "relevance"
    url = reverse("annotation:task", args=[campaign.pk, task.assignment_id])
    response = client.post(url, {"grade": "2", "comment": "fine"})
    assert response.status_code == 302 and response.url == work_url(campaign)
    judgment = Judgment.objects.get(annotator=annotator)
    assert (judgment.grade, judgment.comment) == (2, "fine")
    following = client.get(work_url(campaign)).context["task"]
    assert following.assignment_id != task.assignment_id
    assert following.previous_id == task.assignment_id


def test_workbench_shows_the_guidelines_as_they_are_now(client, annotator, campaign):
    """The help dialogs are a fragment kept per process (templates' `{% cache %}`): new guidelines show."""
    assert campaign.guidelines and campaign.guidelines in client.get(work_url(campaign)).content.decode()
    Campaign.objects.filter(pk=campaign.pk).update(guidelines="Grade <b>only</b> the page.")
    page = client.get(work_url(campaign)).content.decode()
    assert "Grade &lt;b&gt;only&lt;/b&gt; the page." in page and campaign.guidelines not in page


def test_the_workbench_parts_kept_per_process_follow_the_campaign_and_the_task(client, annotator, campaign):
    """The bar's campaign link and tools are fragments kept per process, keyed by what they show."""
    page = client.get(work_url(campaign))
    assert campaign.name in page.content.decode() and 'data-open="wb-skip"' in page.content.decode()
    Campaign.objects.filter(pk=campaign.pk).update(name="Renamed <campaign>")
    page = client.get(work_url(campaign))
    assert "Renamed &lt;campaign&gt;" in page.content.decode() and campaign.name not in page.content.decode()
    url = reverse("annotation:task", args=[campaign.pk, page.context["task"].assignment_id])
    client.post(url, {"grade": "1"})
    answered = client.get(url).content.decode()
    assert 'data-open="wb-skip"' not in answered and 'data-open="wb-guidelines"' in answered


def test_the_side_by_side_parts_kept_per_process_mark_the_answer_given(client, annotator, campaign):
    """The verdict buttons and the strength are fragments kept per process: keyed by the answer given and
    the language, each page marks its own."""
    Campaign.objects.filter(pk=campaign.pk).update(gsb_scale=GSBScale.FIVE_POINT)
    for task in campaign.relevance_tasks.all():
        Judgment.objects.create(campaign_id=task.campaign_id, task=task, annotator=annotator, grade=0)
    task = client.get(work_url(campaign)).context["task"]
    url = reverse("annotation:task", args=[campaign.pk, task.assignment_id])

    def marked(page: str) -> tuple[list[str], list[str]]:
        sides = re.findall(r'name="side" value="(\w+)"[^>]*class="wb-verdict current"', page)
        return sides, re.findall(r'name="strength" value="(\d)" checked', page)

    assert marked(client.get(url).content.decode()) == ([], ["1"])
    client.post(url, {"side": "right", "strength": "2"})
    assert marked(client.get(url).content.decode()) == (["right"], ["2"])
    client.post(url, {"side": "left", "strength": "1"})
    page = client.get(url).content.decode()
    assert marked(page) == (["left"], ["1"]) and "Left better" in page
    chinese = client.get(url, headers={"accept-language": "zh-hans"}).content.decode()
    assert marked(chinese) == (["left"], ["1"]) and "左边更好" in chinese and "Left better" not in chinese


# Combining marks, and characters NFC changes or composes: the Angstrom sign, e and Hangul jamo.
UNNORMAL = st.sampled_from(["\u0301", "\u0323", "\u212b", "e", "\u1100", "\u1161", "\u1e9b"])


@given(text=st.text(UNNORMAL, max_size=12) | st.text(max_size=12), length=st.integers(-2, 14))
def test_truncated_is_truncatechars(text, length):
    """The quick path for a text that fits gives what Django's filter gives, combining marks and forms
    other than NFC included."""
    assert truncated(text, length) == truncatechars(text, length)


class DeepCopiedLabelForm(LabelForm):
    """The label form as Django builds a form: its fields deep-copied for each instance."""


LABEL_FIELDS = ["grade", "side", "strength", "intents", "intents_asked", "duplicate", "comment", "version"]
LABEL_VALUES = ["", "1", "2", "-1", "x", "left", "same", "left:2:1", "right:9:x", "a" * 70]
LABEL_POSTS = st.dictionaries(st.sampled_from(LABEL_FIELDS), st.lists(st.sampled_from(LABEL_VALUES)))


@given(posts=st.lists(LABEL_POSTS, min_size=1, max_size=4))
def test_the_label_form_shares_its_fields_and_answers_as_a_copying_form(posts):
    """Forms built one after another on the class's one set of fields: each answers as a form with its own
    copy would, whatever the one before it was posted."""
    for post in posts:
        data = QueryDict(mutable=True)
        for name, values in post.items():
            data.setlist(name, values)
        shared, copied = LabelForm(data), DeepCopiedLabelForm(data)
        assert shared.is_valid() == copied.is_valid()
        assert shared.errors.get_json_data() == copied.errors.get_json_data()
        assert shared.cleaned_data == copied.cleaned_data
    assert LabelForm().fields is LabelForm.base_fields
    assert DeepCopiedLabelForm().fields is not DeepCopiedLabelForm.base_fields


def test_workbench_post_answers_with_the_next_task(
    client, annotator, campaign, django_assert_max_num_queries
):
    """The script's POST stores the label and shows the next task in the same response, with its address."""
    task = client.get(work_url(campaign)).context["task"]
    url = reverse("annotation:task", args=[campaign.pk, task.assignment_id])
    # session, user with roles, assignment; submit; hand-out (one candidate query more when the random start
    # of the shuffle order lies past the last open task); the page: a fixed count, whatever the campaign
    # size (the general path, as on SQLite; test_round_trip.py counts PostgreSQL's)
    with django_assert_max_num_queries(22):
        response = client.post(url, {"grade": "1"}, headers={"X-Workbench": "next"})
    assert response.status_code == 200
    following = response.context["task"]
    assert following.assignment_id != task.assignment_id
    assert following.previous_id == task.assignment_id
    assert response["X-Workbench-Location"] == reverse(
        "annotation:task", args=[campaign.pk, following.assignment_id]
    )
    assert Judgment.objects.get(annotator=annotator).grade == 1
    assert Assignment.objects.get(pk=following.assignment_id).status == Assignment.Status.LEASED


def test_workbench_post_answers_with_the_part_of_the_page_that_changes(client, annotator, campaign):
    """The script's POST gets the next task's title, messages and main, not the head or the top bar its page
    keeps; a GET of a task, and the page without the script, get the whole page."""
    page = client.get(work_url(campaign))
    assert "X-Workbench-Part" not in page and b"<head>" in page.content and b'class="topbar"' in page.content
    task = page.context["task"]
    url = reverse("annotation:task", args=[campaign.pk, task.assignment_id])
    part = client.post(url, {"grade": "1"}, headers={"X-Workbench": "next"})
    html = part.content.decode()
    assert part["X-Workbench-Part"] == "main"
    assert "<head>" not in html and "topbar" not in html and "<script" not in html
    assert html.count("<main") == 1 and 'data-workbench data-kind="relevance"' in html
    assert f"<title>{escape(truncated(part.context['task'].query.text, 60))} · Judgeboard</title>" in html
    # Changing the answer: the message comes with the part.
    again = client.post(url, {"grade": "2"}, headers={"X-Workbench": "next"})
    assert (
        again["X-Workbench-Part"] == "main" and "Your earlier answer was changed." in again.content.decode()
    )
    whole = client.get(url)
    assert "X-Workbench-Part" not in whole and b"<head>" in whole.content


def test_workbench_post_of_the_last_task_answers_done(client, annotator, campaign):
    task = client.get(work_url(campaign)).context["task"]
    campaign.relevance_tasks.exclude(assignments__pk=task.assignment_id).delete()
    campaign.side_by_side_tasks.all().delete()
    url = reverse("annotation:task", args=[campaign.pk, task.assignment_id])
    response = client.post(url, {"grade": "0"}, headers={"X-Workbench": "next"})
    assert response.status_code == 200 and b"Nothing left" in response.content
    assert response["X-Workbench-Location"] == work_url(campaign)


def test_workbench_post_refused_redirects_to_the_task(client, annotator, campaign):
    """A refused label goes back to its task with the reason, as without the script."""
    task = client.get(work_url(campaign)).context["task"]
    url = reverse("annotation:task", args=[campaign.pk, task.assignment_id])
    response = client.post(url, {"grade": "7"}, headers={"X-Workbench": "next"})
    assert response.status_code == 302 and response.url == url
    assert not Judgment.objects.exists()


def test_workbench_post_of_a_malformed_form_redirects_to_the_task(client, annotator, campaign):
    """A form the page never sends (a grade that is not a number) goes back to its task with the reason."""
    task = client.get(work_url(campaign)).context["task"]
    url = reverse("annotation:task", args=[campaign.pk, task.assignment_id])
    response = client.post(url, {"grade": "three"}, headers={"X-Workbench": "next"})
    assert response.status_code == 302 and response.url == url
    assert "grade" in str(list(get_messages(response.wsgi_request))[0])
    assert not Judgment.objects.exists()


def test_off_scale_grade_shows_error_and_stays(client, annotator, campaign):
    task = client.get(work_url(campaign)).context["task"]
    url = reverse("annotation:task", args=[campaign.pk, task.assignment_id])
    response = client.post(url, {"grade": "7"}, follow=True)
    assert b"not on this campaign" in response.content
    assert not Judgment.objects.exists()


def test_a_verdict_for_a_relevance_task_shows_error_and_stays(client, annotator, campaign):
    task = client.get(work_url(campaign)).context["task"]
    url = reverse("annotation:task", args=[campaign.pk, task.assignment_id])
    response = client.post(url, {"side": "left"}, follow=True)
    assert "grade: is required for this kind of task." in response.content.decode()
    assert response.redirect_chain == [(url, 302)] and not Judgment.objects.exists()


def test_change_previous_grade(client, annotator, campaign):
    task = client.get(work_url(campaign)).context["task"]
    url = reverse("annotation:task", args=[campaign.pk, task.assignment_id])
    client.post(url, {"grade": "1"})
    page = client.get(url)
    assert page.context["task"].current.grade == 1
    client.post(url, {"grade": "3"})
    assert Judgment.objects.get(annotator=annotator).grade == 3


def test_other_annotators_task_is_404(client, annotator, campaign, make_user):
    other = make_user("other", "annotator")
    lease = task_next(annotator=other, campaign=campaign)
    assert client.get(reverse("annotation:task", args=[campaign.pk, lease.pk])).status_code == 404


def test_skip(client, annotator, campaign):
    task = client.get(work_url(campaign)).context["task"]
    url = reverse("annotation:task_skip", args=[campaign.pk, task.assignment_id])
    assert client.post(url, {"reason": "foreign_language"}).status_code == 302
    assert Assignment.objects.get(pk=task.assignment_id).skip_reason == "foreign_language"


def test_side_by_side_page_names_no_model_and_maps_sides(client, annotator, campaign):
    for task in campaign.relevance_tasks.all():
        Judgment.objects.create(campaign_id=task.campaign_id, task=task, annotator=annotator, grade=0)
    response = client.get(work_url(campaign))
    task = response.context["task"]
    assert task.kind == "side_by_side"
    html = response.content.decode()
    assert ">exp<" not in html and "online" not in html and "experimental" not in html
    assignment = Assignment.objects.get(pk=task.assignment_id)
    client.post(reverse("annotation:task", args=[campaign.pk, assignment.pk]), {"side": "right"})
    expected = "bad" if assignment.experimental_on_left else "good"
    assert Preference.objects.get(annotator=annotator).verdict == expected


def test_imported_text_is_escaped_and_only_web_urls_link(client, annotator, campaign):
    Query.objects.filter(campaign=campaign).update(text="<script>alert(1)</script>")
    Document.objects.filter(campaign=campaign).update(
        title="<b>bold</b>", url="javascript:alert(1)", body="<img src=x onerror=alert(1)>"
    )
    html = client.get(work_url(campaign)).content.decode()
    assert "<script>alert(1)" not in html and "&lt;script&gt;" in html
    assert "<b>bold" not in html and "<img src=x" not in html
    assert 'href="javascript:' not in html and "javascript:alert(1)" in html


def test_progress_page_for_reviewers_only(client, make_user, campaign):
    client.force_login(make_user("ann", "annotator"))
    url = reverse("annotation:progress", args=[campaign.pk])
    assert client.get(url).status_code == 403
    client.force_login(make_user("boss", "manager"))
    response = client.get(url)
    assert response.status_code == 200 and b"labels left" in response.content.lower()


def test_progress_page_shows_median_seconds_and_links(client, make_user, campaign):
    ann = make_user("ann", "annotator")
    for seconds in (4.0, 10.0, 6.0):
        lease = task_next(annotator=ann, campaign=campaign)
        Assignment.objects.filter(pk=lease.pk).update(leased_at=lease.leased_at - timedelta(minutes=1))
        judgment_submit(annotator=ann, task=lease.relevance_task, grade=1, seconds_spent=seconds)
    client.force_login(make_user("boss", "manager"))
    page = client.get(reverse("annotation:progress", args=[campaign.pk])).content.decode()
    assert '<td class="num">6.0</td>' in page
    for name in ("metrics:campaign_overview", "metrics:campaign_quality", "annotation:review_queue"):
        assert f'href="{reverse(name, args=[campaign.pk])}"' in page


def test_done_page_when_nothing_left(client, annotator, campaign):
    campaign.relevance_tasks.all().delete()
    campaign.side_by_side_tasks.all().delete()
    assert b"Nothing left" in client.get(work_url(campaign)).content


def test_progress_per_kind_counts_done_and_what_is_left(client, annotator, campaign):
    url = reverse("annotation:work_progress", args=[campaign.pk])
    assert client.get(url).json() == {
        "kinds": [
            {"name": "relevance", "done": 0, "remaining": 8},
            {"name": "side_by_side", "done": 0, "remaining": 1},
        ]
    }
    client.get(work_url(campaign))  # leases a task: still the annotator's to do
    assert client.get(url).json()["kinds"][0] == {"name": "relevance", "done": 0, "remaining": 8}
    task = Assignment.objects.get(annotator=annotator).relevance_task
    client.post(reverse("annotation:task", args=[campaign.pk, Assignment.objects.get().pk]), {"grade": 1})
    assert Judgment.objects.filter(task=task).exists()
    assert client.get(url).json()["kinds"][0] == {"name": "relevance", "done": 1, "remaining": 7}
    page = client.get(work_url(campaign)).content.decode()
    assert f'data-progress-url="{url}"' in page and 'data-kind="relevance" data-status="leased"' in page


def test_a_stale_tab_cannot_overwrite_the_answer(client, annotator, campaign):
    first = client.get(work_url(campaign))
    task = first.context["task"]
    url = reverse("annotation:task", args=[campaign.pk, task.assignment_id])
    assert 'name="version" value="new"' in first.content.decode()
    client.post(url, {"grade": 2, "version": "new"})  # tab A
    response = client.post(url, {"grade": 0, "version": "new"}, follow=True)  # tab B, rendered before A's
    page = response.content.decode()
    assert "answered in another tab or window" in page and "your answer now is 2" in page
    assert "version:" not in page  # the message alone, not the field it came from
    assert Judgment.objects.get(annotator=annotator).grade == 2
    # From a page showing the current answer, changing it works.
    current = client.get(url).context["task"]
    client.post(url, {"grade": 0, "version": current.version})
    assert Judgment.objects.get(annotator=annotator).grade == 0


def test_back_onto_a_skipped_task_says_it_was_skipped(client, annotator, campaign):
    task = client.get(work_url(campaign)).context["task"]
    client.post(
        reverse("annotation:task_skip", args=[campaign.pk, task.assignment_id]), {"reason": "cant_load"}
    )
    page = client.get(reverse("annotation:task", args=[campaign.pk, task.assignment_id])).content.decode()
    assert 'id="wb-skipped"' in page and "can&#x27;t load" in page.lower()


def test_a_skip_can_be_undone_while_the_task_has_room(client, annotator, campaign, make_user):
    task = client.get(work_url(campaign)).context["task"]
    skip = reverse("annotation:task_skip", args=[campaign.pk, task.assignment_id])
    undo = reverse("annotation:skip_undo", args=[campaign.pk, task.assignment_id])
    page_url = reverse("annotation:task", args=[campaign.pk, task.assignment_id])
    client.post(skip, {"reason": "cant_load"})
    held = Assignment.objects.get(pk=task.assignment_id)
    spent = type(held.relevance_task).objects.get(pk=held.relevance_task_id).slots_spent
    assert f'action="{undo}"' in client.get(page_url).content.decode()
    assert client.post(undo).url == page_url
    held.refresh_from_db()
    assert (held.status, held.skip_reason, held.finished_at) == (Assignment.Status.LEASED, "", None)
    assert type(held.relevance_task).objects.get(pk=held.relevance_task_id).slots_spent == spent + 1
    client.post(page_url, {"grade": 2})
    assert Judgment.objects.get(annotator=annotator).grade == 2
    # Skipped again and its room taken by others (overlap 2): the skip stays, with a message saying why.
    task = client.get(work_url(campaign)).context["task"]
    client.post(
        reverse("annotation:task_skip", args=[campaign.pk, task.assignment_id]), {"reason": "cant_load"}
    )
    held = Assignment.objects.get(pk=task.assignment_id)
    others = task_next(annotator=make_user("b", "annotator"), campaign=campaign)
    type(held.relevance_task).objects.filter(pk=held.relevance_task_id).update(slots_spent=campaign.overlap)
    assert others is not None  # others' leases and labels hold the task's room
    response = client.post(
        reverse("annotation:skip_undo", args=[campaign.pk, task.assignment_id]), follow=True
    )
    assert "needs no more answers" in response.content.decode()
    held.refresh_from_db()
    assert held.status == Assignment.Status.SKIPPED


def test_a_scale_of_26_grades_renders_and_every_grade_can_be_chosen(client, annotator, bundle_data):
    bundle_data["name"] = "Wide scale"
    bundle_data["scale"] = [{"value": v, "label": f"G{v}"} for v in range(-16, 10)]
    campaign = campaign_import(bundle=parse_bundle(bundle_data, "wide.json"))
    response = client.get(work_url(campaign))
    assert response.status_code == 200
    keys = [grade.key for grade in response.context["task"].scale]
    assert keys[-10:] == [str(v) for v in range(10)] and "" in keys  # letters ran out: no key, a button
    task = response.context["task"]
    client.post(reverse("annotation:task", args=[campaign.pk, task.assignment_id]), {"grade": -16})
    assert Judgment.objects.get(annotator=annotator).grade == -16


@pytest.mark.parametrize("change", ["removed", "archived"])
def test_a_label_change_after_removal_or_archiving_is_refused_with_a_message(
    client, annotator, campaign, change
):
    """The script's POST (X-Workbench: next) of a changed label, once the annotator was removed from the
    members or the campaign archived: refused with the reason on the task's page, nothing stored (it was
    stored, then the next task's hand-out failed with a 500)."""
    task = client.get(work_url(campaign)).context["task"]
    url = reverse("annotation:task", args=[campaign.pk, task.assignment_id])
    client.post(url, {"grade": "1"})
    if change == "removed":
        campaign_members_set(campaign=campaign, open_to_all=False, members=[])
    else:
        campaign_archive(campaign=campaign, archived=True)
    response = client.post(url, {"grade": "3"}, headers={"X-Workbench": "next"}, follow=True)
    assert response.status_code == 200 and response.redirect_chain == [(url, 302)]
    reason = "not a member of this campaign" if change == "removed" else "archived"
    assert reason in response.content.decode()
    judgment = Judgment.objects.get(annotator=annotator)
    assert judgment.grade == 1 and judgment.task.revisions.count() == 1


def test_the_next_task_refused_after_a_stored_label_is_a_message_not_a_500(
    client, annotator, campaign, make_user
):
    """A manager left the annotator's labels out while they worked: the late label is kept, as any late one
    on a task with room; then no task is handed out, which the answer says instead of failing."""
    task = client.get(work_url(campaign)).context["task"]
    annotator_exclude(campaign=campaign, username="ann", by=make_user("boss", "manager"), reason="too fast")
    url = reverse("annotation:task", args=[campaign.pk, task.assignment_id])
    response = client.post(url, {"grade": "1"}, headers={"X-Workbench": "next"}, follow=True)
    assert response.status_code == 200
    assert "no longer used" in response.content.decode()
    assert Judgment.objects.get(annotator=annotator).grade == 1


def test_side_by_side_lists_escape_as_the_template_did():
    """`result_list` writes the lists in Python: imported text escaped, snippets cut, marks selected."""
    body = "<img src=x>" + "é" * 300
    results = [
        ListedDocument("<b>t</b>", "javascript:x", False, body, position=1, same_as=None),
        ListedDocument("t2", "https://e.com/?a=1&b=2", True, "", position=2, same_as=1),
    ]
    html = result_list(results, "left")
    assert "&lt;b&gt;t&lt;/b&gt;" in html and "<img" not in html and "&lt;img src=x&gt;" in html
    assert 'href="https://e.com/?a=1&amp;b=2"' in html and 'href="javascript' not in html
    assert '<option value="left:2:1" selected>#1</option>' in html and "wb-snippet" in html
    assert "é" * 248 + "…</div>" in html and "é" * 250 not in html
    assert '<li class="muted">No results.</li>' in result_list([], "right")


# The grade buttons as the relevance page's template wrote them, before `grade_buttons` did (split over
# lines where only spaces between attributes or tags change, which `_markup` ignores).
GRADE_BUTTONS_TEMPLATE = """
  <div class="wb-grades" style="--grades: {{ task.scale|length }}">
    {% for grade in task.scale %}
    <button type="submit" name="grade" value="{{ grade.value }}"
      {% if grade.key %} data-key="{{ grade.key }}"{% endif %}
      class="wb-grade{% if task.current and task.current.grade == grade.value %} current{% endif %}">
      <span class="wb-grade-head">{% if grade.key %}<kbd>{{ grade.key }}</kbd>{% endif %}
        <span class="wb-grade-label">{{ grade.label }}</span></span>
      <span class="wb-grade-desc">{{ grade.description }}</span>
    </button>
    {% endfor %}
  </div>
"""


def _markup(html: str) -> str:
    return re.sub(r">\s+<", "><", re.sub(r"\s+", " ", html)).strip()


texts = st.text(alphabet=st.sampled_from("aé中 <>&\"'/;=#"), max_size=8)


@given(
    grades=st.lists(
        st.tuples(st.integers(-3, 12), texts, texts, st.sampled_from(["", "0", "7", "a", "<"])),
        max_size=6,
        unique_by=lambda grade: grade[0],
    ),
    given_grade=st.one_of(st.none(), st.integers(-3, 12)),
)
def test_grade_buttons_write_what_the_template_did(grades, given_grade):
    """`grade_buttons` writes the grade buttons in Python: the same markup as the template's loop, imported
    labels and descriptions escaped, the grade given before marked."""
    scale = [GradeChoice(value, label, description, key) for value, label, description, key in grades]
    current = None if given_grade is None else CurrentGrade(grade=given_grade, comment="")
    expected = Template(GRADE_BUTTONS_TEMPLATE).render(
        Context({"task": {"scale": scale, "current": current}})
    )
    assert _markup(grade_buttons(scale, current)) == _markup(expected)
