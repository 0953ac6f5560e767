"""Parsing the pages' posts (sign-in, workbench, people, members); the rules live in the services."""

import re

from django import forms
from django.conf import settings
from django.contrib.auth.forms import AuthenticationForm
from django.utils.translation import gettext_lazy as _

from annotation.bundle.campaign import MODEL_NAME_LENGTH, is_model_name
from annotation.campaign_settings import CAMPAIGN_SETTINGS, Kind, Setting
from annotation.errors import InputError, TaskError
from annotation.models import SkipReason
from annotation.roles import ROLE_LABELS, Role
from annotation.selectors.people import campaign_member_candidates
from annotation.selectors.review import QueueState
from annotation.services.labels import SIDES
from annotation.services.logins import LoginLimited, user_authenticate
from annotation.task_kinds import KIND_NAMES, TaskKind, kind_named


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


class LanguageForm(forms.Form):
    """The language switcher's post: a language offered, and the page to go back to."""

    language = forms.ChoiceField(choices=settings.LANGUAGES)
    next = forms.CharField(required=False, max_length=2000)


def form_errors_text(form: forms.Form) -> str:
    """A refused form's errors as one line for a page message: `field: problem; field: problem`."""
    return "; ".join(f"{field}: {' '.join(map(str, errors))}" for field, errors in form.errors.items())


class ValuesField(forms.Field):
    """Every value posted under the name (checkboxes, selects), the empty ones left out."""

    widget = forms.MultipleHiddenInput

    def to_python(self, value) -> list[str]:
        return [item for item in value or [] if item]


# A near-duplicate mark as a select posts it: side, position, same-as position ("left:3:2").
DUPLICATE_MARK = re.compile(r"(left|right):([0-9]{1,4}):([0-9]{1,4})")


class _FieldsShared(dict):
    """A form's `base_fields` that `copy.deepcopy` returns as they are (see `fields_once`)."""

    def __deepcopy__(self, memo):
        return self


def fields_once[F: type[forms.Form]](form_class: F) -> F:
    """Class decorator: every instance of the form uses the class's own fields, where Django deep-copies all
    of them (with their widgets) for each instance. The workbench's label form is built on every label:
    built and checked in 60 µs, not 220. Only for a form that changes none of its fields per instance
    (choices, `required`, widget attributes), as a view may do to an ordinary form."""
    form_class.base_fields = _FieldsShared(form_class.base_fields)
    return form_class


@fields_once
class LabelForm(forms.Form):
    """The workbench's label: a grade and the intents ticked (relevance task) or a side, strength and
    near-duplicates (side by side); which the task needs, and whether the grade is on the scale, is the
    service's call (`label_submit`)."""

    grade = forms.IntegerField(required=False)
    side = forms.TypedChoiceField(choices=[(side, side) for side in SIDES], required=False, empty_value=None)
    strength = forms.TypedChoiceField(
        choices=[("1", _("slightly")), ("2", _("much"))], coerce=int, required=False, empty_value=None
    )
    intents = ValuesField(required=False)
    intents_asked = forms.BooleanField(required=False)  # the page showed intents: none ticked is an answer
    duplicate = ValuesField(required=False)
    comment = forms.CharField(required=False, max_length=5000, strip=True)
    version = forms.CharField(required=False, max_length=64)  # the label the page showed

    def clean_duplicate(self) -> list[list] | None:
        marks = []
        for value in self.cleaned_data["duplicate"]:
            match = DUPLICATE_MARK.fullmatch(value)
            if match is None:
                raise forms.ValidationError(_("a near-duplicate is marked as side:position:same-as position"))
            marks.append([match[1], int(match[2]), int(match[3])])
        return marks or None

    def clean(self):
        data = super().clean()
        # The strength radio is always posted on the 5-point scale; it means nothing for "same".
        if data.get("side") == "same":
            data["strength"] = None
        if not data.get("intents_asked"):
            data["intents"] = None
        return data


# ASCII digits only: str.isdigit() accepts "²", which int() then refuses; three digits cover any scale.
GRADE_TEXT = re.compile(r"-?[0-9]{1,3}")


class AdjudicationForm(forms.Form):
    """A reviewer's final label: a grade (relevance task) or a verdict (side by side), and why; whether the
    grade is on the scale and the reason is given is the service's call."""

    label = forms.CharField(max_length=8, strip=True)
    reason = forms.CharField(required=False, max_length=5000, strip=True)
    version = forms.CharField(required=False, max_length=64)  # the final label the page showed

    def __init__(self, *args, relevance: bool, **kwargs):
        super().__init__(*args, **kwargs)
        self.relevance = relevance

    def clean_label(self) -> dict:
        label = self.cleaned_data["label"]
        if not self.relevance:
            return {"verdict": label}
        if not GRADE_TEXT.fullmatch(label):
            raise forms.ValidationError(_("is not a grade (a whole number such as 2 or -1)"))
        return {"grade": int(label)}


class SkipForm(forms.Form):
    reason = forms.ChoiceField(choices=SkipReason.choices)


def _roles_offer(form: forms.Form, roles: list[Role]) -> None:
    """The form's role field offers `roles` only."""
    field = form.fields["role"]
    assert isinstance(field, forms.ChoiceField)
    field.choices = [(role.value, ROLE_LABELS[role]) for role in roles]


class PersonForm(forms.Form):
    """A new person; `roles` are those the manager may give (`roles.roles_grantable`)."""

    username = forms.CharField(max_length=150, label=_("Username"))
    name = forms.CharField(max_length=150, required=False, label=_("Name"))
    role = forms.ChoiceField(label=_("Role"))

    def __init__(self, *args, roles: list[Role], **kwargs):
        super().__init__(*args, **kwargs)
        _roles_offer(self, roles)


class PersonActionForm(forms.Form):
    """One action on a person: `role` is read for "role" only, from the roles the manager may give."""

    action = forms.ChoiceField(
        choices=[
            ("deactivate", _("Deactivate")),
            ("activate", _("Activate")),
            ("password_reset", _("Reset password")),
            ("role", _("Change role")),
        ]
    )
    role = forms.ChoiceField(required=False)

    def __init__(self, *args, roles: list[Role], **kwargs):
        super().__init__(*args, **kwargs)
        _roles_offer(self, roles)

    def clean(self):
        data = super().clean()
        if data.get("action") == "role" and not data.get("role"):
            self.add_error("role", _("Choose a role."))
        return data


class CampaignMembersForm(forms.Form):
    open_to_all = forms.BooleanField(required=False, label=_("Open to every annotator"))
    members = forms.ModelMultipleChoiceField(
        queryset=campaign_member_candidates(), required=False, widget=forms.CheckboxSelectMultiple
    )


# The fields of the runs the new-campaign page posts; ASCII digits only (str.isdigit() accepts "²").
RUN_FIELD = re.compile(r"run_(?:model|file)_([0-9]{1,4})")


class CampaignUploadForm(forms.Form):
    """A bundle and any number of (model, TREC run) pairs, posted as `run_model_<i>` and `run_file_<i>`."""

    bundle = forms.FileField(
        help_text=_("The campaign bundle: JSON as import_campaign reads it, may be gzipped.")
    )

    def clean(self):
        data = super().clean()
        indexes = set()
        for key in [*self.data, *self.files]:
            if not key.startswith("run_"):
                continue
            field = RUN_FIELD.fullmatch(key)
            if field is None:
                raise forms.ValidationError(
                    _(
                        "%(key)r is not a run's field: runs are posted as run_model_0 and run_file_0, "
                        "run_model_1 and run_file_1, and so on."
                    )
                    % {"key": key}
                )
            indexes.add(int(field[1]))
        runs = []
        for index in sorted(indexes):
            model = self.data.get(f"run_model_{index}", "").strip()
            upload = self.files.get(f"run_file_{index}")
            if not model and upload is None:
                continue
            if not model or upload is None:
                raise forms.ValidationError(
                    _("run %(number)s: give both the model's name and its run file") % {"number": index + 1}
                )
            if len(model) > MODEL_NAME_LENGTH or not is_model_name(model):
                raise forms.ValidationError(
                    _(
                        "run %(number)s: the model's name must start with a letter or digit (of any script) "
                        "and hold only letters, digits, their marks and . _ - + : @; it is at most "
                        "%(length)s characters long."
                    )
                    % {"number": index + 1, "length": MODEL_NAME_LENGTH}
                )
            runs.append((model, upload))
        for upload in [data.get("bundle"), *(upload for _model, upload in runs)]:
            if upload is not None and upload.size > settings.IMPORT_UPLOAD_MAX_BYTES:
                raise forms.ValidationError(
                    _("%(file)s: larger than %(bytes)s bytes")
                    % {"file": upload.name, "bytes": settings.IMPORT_UPLOAD_MAX_BYTES}
                )
        data["runs"] = runs
        return data


class InteractionLogForm(forms.Form):
    """An interaction log to add to a campaign (docs/interactions.md)."""

    file = forms.FileField(
        label=_("Interaction log"),
        help_text=_("JSONL, one impression a line, may be gzipped."),
    )

    def clean_file(self):
        upload = self.cleaned_data["file"]
        if upload.size > settings.MAX_UPLOAD_BYTES:
            raise forms.ValidationError(
                _("%(name)s: larger than %(limit)s bytes; import it with manage.py import_interactions")
                % {"name": upload.name, "limit": settings.MAX_UPLOAD_BYTES}
            )
        return upload


class ImportActionForm(forms.Form):
    action = forms.ChoiceField(
        choices=[("confirm", _("Create the campaign")), ("cancel", _("Cancel")), ("retry", _("Retry"))]
    )


class ReviewQueueForm(forms.Form):
    """The review queue's filters and page, from the query string; an empty field means its default."""

    state = forms.ChoiceField(choices=[(state.value, state.value) for state in QueueState], required=False)
    kind = forms.ChoiceField(choices=[(name, name) for name in KIND_NAMES], required=False)
    page = forms.IntegerField(min_value=1, required=False)

    def clean_state(self) -> QueueState:
        return QueueState(self.cleaned_data["state"] or QueueState.OPEN)

    def clean_kind(self) -> TaskKind | None:
        return kind_named(self.cleaned_data["kind"]) if self.cleaned_data["kind"] else None


class CutoffsField(forms.Field):
    """Cut-offs typed as `1, 3, 5, 10`; whether they are positive is the bundle parser's call."""

    widget = forms.TextInput

    def to_python(self, value) -> list[int]:
        if isinstance(value, list):
            return value
        try:
            return [int(part) for part in (value or "").replace(",", " ").split()]
        except ValueError:
            raise forms.ValidationError(_("whole numbers separated by commas, e.g. 1, 3, 5, 10")) from None

    def prepare_value(self, value):
        return ", ".join(map(str, value)) if isinstance(value, list) else value


class WeightsField(forms.Field):
    """Position weights typed as `1, 0.8, 0.63`, empty for none; whether they fit is the parser's call."""

    widget = forms.TextInput

    def __init__(self, **kwargs):
        super().__init__(required=False, **kwargs)

    def to_python(self, value) -> list[float] | None:
        if value is None or isinstance(value, list):
            return value
        parts = value.replace(",", " ").split()
        try:
            return [float(part) for part in parts] or None
        except ValueError:
            raise forms.ValidationError(_("numbers separated by commas, e.g. 1, 0.8, 0.63")) from None

    def prepare_value(self, value):
        return ", ".join(map(str, value)) if isinstance(value, list) else value


def setting_form_field(setting: Setting) -> forms.Field:
    """A setting's field on the settings page: parsed to the type the bundle's `settings` hold, without its
    range (the bundle parser checks that, with the API's messages)."""
    label = setting.label
    if setting.choices is not None:
        if setting.type_name == "integer":
            return forms.TypedChoiceField(choices=setting.choices.choices, coerce=int, label=label)
        return forms.ChoiceField(choices=setting.choices.choices, label=label)
    match setting.kind:
        case Kind.INTEGER:
            return forms.IntegerField(label=label)
        case Kind.NUMBER:
            return forms.FloatField(label=label)
        case Kind.BOOLEAN:
            return forms.BooleanField(required=False, label=label)
        case Kind.CUTOFFS:
            return CutoffsField(label=label)
        case Kind.WEIGHTS:
            return WeightsField(label=label)
        case _:  # text: a measure name, guardrails (none is empty), action grades
            required = setting.kind is not Kind.GUARDRAILS
            return forms.CharField(max_length=setting.max_length, label=label, required=required)


SCALE_ROW = re.compile(r"^scale-(\d+)-(value|label|description)$")
SCALE_ROWS_MAX = 20  # grades a page offers (a scale has a handful)
SCALE_SPARE_ROWS = 2  # empty rows under the scale, to add a grade


class CampaignSettingsForm(forms.Form):
    """The settings page: the texts, the scale as rows (value, label, description; a row left empty is no
    grade) and a field per setting of `CAMPAIGN_SETTINGS`; their ranges and the rules on what may still
    change are checked by `parse_campaign_change` and `campaign_change`, as for the API."""

    description = forms.CharField(
        required=False, label=_("Description"), widget=forms.Textarea(attrs={"rows": 2})
    )
    guidelines = forms.CharField(
        required=False, label=_("Guidelines"), widget=forms.Textarea(attrs={"rows": 6})
    )

    OUTSIDE_SETTINGS = ("description", "guidelines", "scale")

    def __init__(self, *args, scale_locked: bool, **kwargs):
        super().__init__(*args, **kwargs)
        self.scale_locked = scale_locked
        scale = self.initial.get("scale") or []
        posted = {int(match[1]) for key in (self.data or {}) if (match := SCALE_ROW.match(key))}
        rows = min(max(len(scale) + SCALE_SPARE_ROWS, max(posted, default=-1) + 1), SCALE_ROWS_MAX)
        for index in range(rows):
            grade = scale[index] if index < len(scale) else {}
            for part, field in (
                ("value", forms.IntegerField(required=False, label=_("Value"))),
                ("label", forms.CharField(required=False, max_length=200, label=_("Label"))),
                (
                    "description",
                    forms.CharField(required=False, max_length=2000, label=_("Description")),
                ),
            ):
                field.disabled = scale_locked  # a disabled field keeps its initial value
                field.initial = grade.get(part, "")
                self.fields[f"scale-{index}-{part}"] = field
        self.fields.update((setting.name, setting_form_field(setting)) for setting in CAMPAIGN_SETTINGS)

    @property
    def scale_rows(self) -> list[list[forms.BoundField]]:
        """The scale's fields a row per grade, for the page's table."""
        rows = len([name for name in self.fields if name.endswith("-value") and name.startswith("scale-")])
        return [
            [self[f"scale-{index}-{part}"] for part in ("value", "label", "description")]
            for index in range(rows)
        ]

    @property
    def setting_fields(self) -> list[forms.BoundField]:
        """The fields of `CAMPAIGN_SETTINGS`, in its order."""
        return [self[setting.name] for setting in CAMPAIGN_SETTINGS]

    def add_input_error(self, error: InputError | TaskError) -> None:
        """An error of `parse_campaign_change` or `campaign_change` beside the field it names
        (`settings.overlap`, `scale[1].label`), worded once; one naming no field of the page tops the form."""
        path = error.field or ""
        name = path.removeprefix("settings.")
        if match := re.match(r"^scale\[(\d+)\]\.(value|label|description)$", path):
            name = f"scale-{match[1]}-{match[2]}"
        if name in self.fields and not self.fields[name].disabled:
            self.add_error(name, error.message)
        else:
            self.add_error(None, f"{path}: {error.message}" if path else error.message)

    def clean(self):
        cleaned = super().clean()
        scale = []
        for value, label, description in self.scale_rows:
            row = [cleaned.get(field.name) for field in (value, label, description)]
            if row[0] is None and not row[1] and not row[2]:
                continue  # an empty row
            if row[0] is None:
                self.add_error(value.name, _("Give this grade a value (a whole number)."))
            scale.append({"value": row[0], "label": row[1] or "", "description": row[2] or ""})
        cleaned["scale"] = scale
        return cleaned

    def change(self) -> dict:
        """What was changed, in the shape `parse_campaign_change` reads."""
        changed = {key: self.cleaned_data[key] for key in self.changed_data if not SCALE_ROW.match(key)}
        if not self.scale_locked and self.cleaned_data["scale"] != _scale_rows_of(self.initial.get("scale")):
            changed["scale"] = self.cleaned_data["scale"]
        settings = {key: changed.pop(key) for key in list(changed) if key not in self.OUTSIDE_SETTINGS}
        return {**changed, "settings": settings}


def _scale_rows_of(scale: list[dict] | None) -> list[dict]:
    return [
        {"value": grade["value"], "label": grade["label"], "description": grade.get("description", "")}
        for grade in scale or []
    ]


class CampaignArchiveForm(forms.Form):
    archived = forms.TypedChoiceField(choices=[("1", "archive"), ("0", "restore")], coerce=lambda v: v == "1")


class ExclusionForm(forms.Form):
    action = forms.ChoiceField(
        choices=[("exclude", "exclude"), ("reinstate", "reinstate"), ("confirm", "confirm")]
    )
    annotator = forms.CharField(required=False, max_length=150)
    reason = forms.CharField(required=False, max_length=5000, strip=True)
    next = forms.CharField(required=False, max_length=2000)
