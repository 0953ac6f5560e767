"""Parsing the pages' posts (sign-in, workbench, people, members); the rules live in the services."""

from django import forms
from django.contrib.auth.forms import AuthenticationForm

from annotation.models import SkipReason
from annotation.roles import Role
from annotation.selectors.people import campaign_member_candidates
from annotation.services.labels import SIDES
from annotation.services.logins import LoginLimited, user_authenticate


class LoginForm(AuthenticationForm):
    """Django's sign-in form, with failed attempts limited per account and address."""

    def clean(self):
        username, password = self.cleaned_data.get("username"), self.cleaned_data.get("password")
        if username is not None and password:
            try:
                self.user_cache = user_authenticate(
                    request=self.request, username=username, password=password
                )
            except LoginLimited as limited:
                raise forms.ValidationError(str(limited), code="login_limited") from None
            if self.user_cache is None:
                raise self.get_invalid_login_error()
            self.confirm_login_allowed(self.user_cache)
        return self.cleaned_data


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


class PersonForm(forms.Form):
    username = forms.CharField(max_length=150)
    name = forms.CharField(max_length=150, required=False)
    role = forms.ChoiceField(choices=[(role.value, role.value) for role in Role])


class PersonActionForm(forms.Form):
    action = forms.ChoiceField(
        choices=[("deactivate", "Deactivate"), ("activate", "Activate"), ("password_reset", "Reset password")]
    )


class CampaignMembersForm(forms.Form):
    open_to_all = forms.BooleanField(required=False, label="Open to every annotator")
    members = forms.ModelMultipleChoiceField(
        queryset=campaign_member_candidates(), required=False, widget=forms.CheckboxSelectMultiple
    )
