"""Parsing the metrics pages' query strings."""

from django import forms
from django.utils.translation import gettext_lazy as _
from django.utils.translation import pgettext_lazy

from metrics.selectors.explorer import SORT_KEYS, ExplorerFilter, Lists

ANY = [("", _("any"))]


class ExplorerForm(forms.Form):
    """The query explorer's filters; a value that does not parse is ignored (the page keeps its default)."""

    model = forms.CharField(required=False, max_length=100)
    measure = forms.CharField(required=False, max_length=32)
    q = forms.CharField(required=False, max_length=200, label=_("Search"))
    segment = forms.CharField(required=False, max_length=100)
    verdict = forms.ChoiceField(
        required=False,
        choices=[*ANY, ("good", _("Good")), ("same", _("Same")), ("bad", _("Bad")), ("none", _("none yet"))],
    )
    lists = forms.ChoiceField(
        required=False,
        choices=[
            *ANY,
            (Lists.CHANGED.value, pgettext_lazy("lists", "changed")),
            (Lists.IDENTICAL.value, _("identical")),
        ],
    )
    disputed = forms.ChoiceField(required=False, choices=[*ANY, ("yes", _("disputed")), ("no", _("agreed"))])
    alone = forms.ChoiceField(
        required=False,
        choices=[
            *ANY,
            ("either", _("judges and users disagree")),
            ("judges", _("only the judges prefer the experiment")),
            ("users", _("only the users prefer the experiment")),
        ],
    )
    sort = forms.ChoiceField(required=False, choices=[(key, key) for key in SORT_KEYS])
    order = forms.ChoiceField(required=False, choices=[("asc", _("ascending")), ("desc", _("descending"))])
    page = forms.IntegerField(required=False, min_value=1, max_value=1_000_000)

    def filters(self) -> ExplorerFilter:
        """The filters of the fields that parsed (call after `is_valid`)."""
        data = self.cleaned_data
        disputed = {"yes": True, "no": False}.get(data.get("disputed") or "")
        return ExplorerFilter(
            search=data.get("q") or "",
            segment=data.get("segment") or "",
            verdict=data.get("verdict") or "",
            lists=Lists(data["lists"]) if data.get("lists") else None,
            disputed=disputed,
            alone=data.get("alone") or "",
            sort=data.get("sort") or "query",
            descending=data.get("order") == "desc",
        )
