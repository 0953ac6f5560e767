"""Parsing the metrics pages' query strings."""

from django import forms

from metrics.selectors.explorer import SORT_KEYS, ExplorerFilter, Lists

ANY = [("", "any")]


class ExplorerForm(forms.Form):
    """The query explorer's filters; a value that does not parse is ignored (the page keeps its default)."""

    model = forms.CharField(required=False, max_length=100)
    measure = forms.CharField(required=False, max_length=32)
    q = forms.CharField(required=False, max_length=200, label="Search")
    segment = forms.CharField(required=False, max_length=100)
    verdict = forms.ChoiceField(
        required=False,
        choices=[*ANY, ("good", "good"), ("same", "same"), ("bad", "bad"), ("none", "none yet")],
    )
    lists = forms.ChoiceField(required=False, choices=[*ANY, *((kind.value, kind.value) for kind in Lists)])
    disputed = forms.ChoiceField(required=False, choices=[*ANY, ("yes", "disputed"), ("no", "agreed")])
    alone = forms.ChoiceField(
        required=False,
        choices=[
            *ANY,
            ("either", "judges and users disagree"),
            ("judges", "only the judges prefer the experiment"),
            ("users", "only the users prefer the experiment"),
        ],
    )
    sort = forms.ChoiceField(required=False, choices=[(key, key) for key in SORT_KEYS])
    order = forms.ChoiceField(required=False, choices=[("asc", "ascending"), ("desc", "descending")])
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
