"""`{% result_list results side %}`: a side-by-side task's list on the workbench, written out in Python. As an
included template (a loop in a loop, some fifty nodes a result) it was half the page's render, and the
page is rendered on every label. `{% grade_buttons scale current %}`: a relevance task's grade buttons, in
Python for the same reason (a fifth of the page's render as a loop of the template). `|truncated`:
Django's `truncatechars`, quick when the text fits."""

import unicodedata

from django import template
from django.template.defaultfilters import stringfilter, truncatechars
from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe
from django.utils.translation import gettext

from annotation.selectors.task_page import CurrentGrade, GradeChoice, ListedDocument
from annotation.templatetags.links import safe_link

register = template.Library()

SNIPPET_CHARACTERS = 260


@register.filter(is_safe=True)
@stringfilter
def truncated(value: str, length: int) -> str:
    """`truncatechars`, the same text: a text that fits in NFC form (as `truncatechars` returns it) as it is,
    where Django's `Truncator` spends some 35 µs even on a short one, ten times a side-by-side page."""
    if len(value) <= length and unicodedata.is_normalized("NFC", value):
        return value
    return truncatechars(value, length)


@register.simple_tag
def result_list(results: list[ListedDocument], side: str) -> SafeString:
    """The `<ol>` of one side's results (`side`: left or right), each with its near-duplicate choice."""
    side = escape(side)
    items = [_result(result, side) for result in results]
    if not items:
        empty = escape(gettext("No results."))
        items = [f'\n  <li class="muted">{empty}</li>\n  ']
    return mark_safe(f'\n<ol class="wb-results">\n  {"".join(items)}\n</ol>\n')


def _result(result: ListedDocument, side: str) -> str:
    position = result.position
    url = f'<div class="wb-url">{safe_link(result.url)}</div>' if result.url else ""
    snippet = (
        f'<div class="wb-snippet">{escape(truncated(result.body, SNIPPET_CHARACTERS))}</div>'
        if result.body
        else ""
    )
    same = ""
    if position > 1:
        options = "".join(
            f'<option value="{side}:{position}:{earlier}"'
            f"{' selected' if result.same_as == earlier else ''}>#{earlier}</option>"
            for earlier in result.earlier
        )
        label = escape(gettext("Near-duplicate of"))
        same = (
            f'\n    <label class="wb-same"><span>{label}</span>\n'
            f'      <select name="duplicate" form="wb-label-form" data-side="{side}" '
            f'data-position="{position}">\n'
            f'        <option value="">—</option>\n        {options}\n      </select></label>\n    '
        )
    return (
        f'\n  <li class="wb-result" data-side="{side}" data-position="{position}">\n'
        f'    <div class="wb-result-title">{escape(result.title)}</div>\n'
        f"    {url}\n    {snippet}\n    {same}\n  </li>\n  "
    )


@register.simple_tag
def grade_buttons(scale: list[GradeChoice], current: CurrentGrade | None) -> SafeString:
    """The `<div>` of a relevance task's grade buttons, each with its key; the grade given before is
    `current`."""
    given = None if current is None else current.grade
    buttons = "".join(_grade_button(grade, grade.value == given) for grade in scale)
    return mark_safe(f'<div class="wb-grades" style="--grades: {len(scale)}">{buttons}\n  </div>')


def _grade_button(grade: GradeChoice, given: bool) -> str:
    key = escape(grade.key)
    data_key, kbd = (f' data-key="{key}"', f"<kbd>{key}</kbd>") if key else ("", "")
    return (
        f'\n    <button type="submit" name="grade" value="{grade.value}"{data_key}\n'
        f'      class="wb-grade{" current" if given else ""}">\n'
        f'      <span class="wb-grade-head">{kbd}'
        f'<span class="wb-grade-label">{escape(grade.label)}</span></span>\n'
        f'      <span class="wb-grade-desc">{escape(grade.description)}</span>\n    </button>'
    )
