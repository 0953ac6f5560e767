"""Parsing the workbench's posts; the rules live in the services."""

from django import forms

from annotation.models import SkipReason
from annotation.services.labels import SIDES


class JudgmentForm(forms.Form):
    grade = forms.IntegerField()  # whether it is on the scale is the service's call
    comment = forms.CharField(required=False, max_length=5000, strip=True)


class PreferenceForm(forms.Form):
    side = forms.ChoiceField(choices=[(side, side) for side in SIDES])
    strength = forms.TypedChoiceField(
        choices=[("1", "slightly"), ("2", "much")], coerce=int, required=False, empty_value=None
    )
    comment = forms.CharField(required=False, max_length=5000, strip=True)

    def clean(self):
        data = super().clean()
        # The strength radio is always posted on the 5-point scale; it means nothing for "same".
        if data.get("side") == "same":
            data["strength"] = None
        return data


class SkipForm(forms.Form):
    reason = forms.ChoiceField(choices=SkipReason.choices)
