"""Parsing requests and shaping responses; no rules here (they live in the services)."""

from django.utils.translation import gettext as _
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from annotation.bundle.campaign import (
    GRADE_LABEL_MAX_LENGTH,
    GRADE_MAX,
    GRADE_MIN,
    INTENT_ID_LENGTH,
    INTENT_TEXT_LENGTH,
    MODEL_NAME_LENGTH,
    MODEL_NAME_RULE,
)
from annotation.campaign_settings import CAMPAIGN_SETTINGS, SCALE_LOCK, SETTING_NAMES, Kind, Setting
from annotation.models import Campaign, LabelRevision, Query, RankingModel, SkipReason, Verdict
from annotation.roles import Role
from annotation.selectors.people import campaign_member_candidates
from annotation.services.labels import SIDES
from annotation.task_kinds import KIND_NAMES, assignment_task
from plumbing.serializers import FieldsOnceSerializer


class StrictIntegerField(serializers.IntegerField):
    """An integer as JSON writes it: "2", 2.0 and true are wrong types, not 2."""

    default_error_messages = {"invalid": "must be an integer."}

    def to_internal_value(self, data):
        if isinstance(data, bool) or not isinstance(data, int):
            self.fail("invalid")
        return super().to_internal_value(data)


class StrictFloatField(serializers.FloatField):
    """A JSON number: "5" and true are wrong types, not 5."""

    default_error_messages = {"invalid": "must be a number."}

    def to_internal_value(self, data):
        if isinstance(data, bool) or not isinstance(data, int | float):
            self.fail("invalid")
        return super().to_internal_value(data)


class StrictCharField(serializers.CharField):
    """A JSON string: 5 is a wrong type, not "5"."""

    def to_internal_value(self, data):
        if not isinstance(data, str):
            self.fail("invalid")
        return super().to_internal_value(data)


class StrictBooleanField(serializers.BooleanField):
    """A JSON boolean: 0, "true" and "yes" are wrong types, not true."""

    def to_internal_value(self, data):
        if not isinstance(data, bool):
            self.fail("invalid")
        return data


# A verdict relative to the experimental model, as reviewers and gold labels give it.
VERDICTS = Verdict.values

# --- Requests ---------------------------------------------------------------------------------------------


class TokenRequestSerializer(serializers.Serializer):
    username = serializers.CharField(max_length=150)
    password = serializers.CharField(max_length=4096, trim_whitespace=False, style={"input_type": "password"})


class TokenSerializer(serializers.Serializer):
    token = serializers.CharField()


class RunUploadSerializer(serializers.Serializer):
    model = serializers.CharField(max_length=100, help_text="The name of one of the campaign's models.")
    file = serializers.FileField(
        allow_empty_file=True, help_text="A TREC run: `qid Q0 docid rank score tag` per line, may be gzipped."
    )


class LabelRequestSerializer(FieldsOnceSerializer):
    """`grade` for a relevance task, `verdict` for a side-by-side task."""

    grade = StrictIntegerField(required=False, help_text="Relevance tasks: a value of the campaign's scale.")
    verdict = serializers.ChoiceField(
        choices=SIDES, required=False, help_text="Side-by-side tasks: the better list, or `same`."
    )
    strength = StrictIntegerField(
        required=False,
        allow_null=True,
        min_value=1,
        max_value=2,
        help_text="5-point campaigns, verdict left or right: 1 slightly, 2 much better.",
    )
    intents = serializers.ListField(
        child=StrictCharField(max_length=100),
        required=False,
        allow_null=True,
        max_length=50,
        help_text="Relevance tasks whose query has intents: the ids of those the document serves ([] none).",
    )
    duplicates = serializers.ListField(
        child=serializers.ListField(min_length=3, max_length=3),
        required=False,
        allow_null=True,
        max_length=200,
        help_text="Side-by-side tasks: near-duplicates as shown, [side, position, same as position]: "
        '["left", 3, 2] is "left #3 is the same as #2".',
    )
    comment = StrictCharField(required=False, allow_blank=True, max_length=5000, default="")
    seconds_spent = StrictFloatField(required=False, allow_null=True, min_value=0, max_value=86400)
    version = StrictCharField(
        required=False,
        max_length=64,
        help_text="The task's `version` as you read it: if your label changed since (another tab or client), "
        "the answer is 409 with the current label and nothing changes.",
    )


class AdjudicationRequestSerializer(serializers.Serializer):
    grade = StrictIntegerField(required=False, help_text="Relevance tasks: the final grade.")
    verdict = serializers.ChoiceField(
        choices=VERDICTS,
        required=False,
        help_text="Side-by-side tasks, relative to the experimental model.",
    )
    reason = StrictCharField(max_length=5000)
    version = StrictCharField(
        required=False,
        max_length=64,
        help_text="The task's `version` as you read it: a final label changed since is kept (409).",
    )


# --- Campaigns --------------------------------------------------------------------------------------------


def setting_serializer_field(setting: Setting, *, request: bool = False) -> serializers.Field:
    """A campaign setting as the API reads and writes it, typed from `CAMPAIGN_SETTINGS`: the schema gets
    its type, range or choices and meaning. In a request every setting is optional and a number is a JSON
    number (as the bundle parser reads it)."""
    options: dict = {"help_text": setting.description, **({"required": False} if request else {})}
    integer = StrictIntegerField if request else serializers.IntegerField
    if setting.choices is not None:
        return serializers.ChoiceField(choices=setting.choices.choices, **options)
    match setting.kind:
        case Kind.INTEGER:
            return integer(min_value=setting.low, max_value=setting.high, **options)
        case Kind.NUMBER:
            number = (StrictFloatField if request else serializers.FloatField)(**options)
            # Both ends of a range are in the schema; an open range's are excluded, which DRF cannot say.
            return extend_schema_field(_number_schema(setting))(number)
        case Kind.BOOLEAN:
            return serializers.BooleanField(**options)
        case Kind.CUTOFFS:  # null: the default
            return serializers.ListField(
                child=integer(min_value=1), min_length=1, allow_null=request, **options
            )
        case Kind.WEIGHTS:
            number = StrictFloatField if request else serializers.FloatField
            return serializers.ListField(child=number(min_value=0), min_length=1, allow_null=True, **options)
        case _:  # text: a measure name, guardrails (none is empty), action grades (empty: the defaults)
            blank = setting.kind in (Kind.GUARDRAILS, Kind.ACTION_GRADES)
            return (StrictCharField if request else serializers.CharField)(
                max_length=setting.max_length, allow_blank=blank, **options
            )


def _number_schema(setting: Setting) -> dict:
    schema = {"type": "number", "format": "double", "minimum": setting.low, "maximum": setting.high}
    return {**schema, "exclusiveMinimum": True, "exclusiveMaximum": True} if setting.open else schema


class GradeSerializer(serializers.Serializer):
    value = serializers.IntegerField()
    label = serializers.CharField()
    description = serializers.CharField(allow_blank=True)


class CampaignSerializer(serializers.ModelSerializer):
    """What annotators may read in the list: the description (which may name the models) is not for them."""

    class Meta:
        model = Campaign
        fields = ["id", "name", "created_at"]


class CampaignReviewListSerializer(CampaignSerializer):
    class Meta(CampaignSerializer.Meta):
        fields = ["id", "name", "description", "created_at"]
        extra_kwargs = {"description": {"help_text": "Reviewers and managers only."}}


class CampaignDetailSerializer(serializers.ModelSerializer):
    """What every user may read of a campaign: its name, guidelines and scale; no description (it may name
    the models), no model, no setting of the launch rule."""

    scale = GradeSerializer(many=True)

    class Meta:
        model = Campaign
        fields = ["id", "name", "guidelines", "scale", "created_at"]


class RankingModelSerializer(serializers.ModelSerializer):
    class Meta:
        model = RankingModel
        fields = ["id", "name", "role"]


class CampaignReviewSerializer(CampaignDetailSerializer):
    """Reviewers and managers: also the models and every setting."""

    models = RankingModelSerializer(many=True)
    standard = serializers.StringRelatedField(
        allow_null=True, help_text='The judging standard and its version, e.g. "web v2"; null without one.'
    )

    class Meta:
        model = Campaign
        fields = [
            *CampaignDetailSerializer.Meta.fields,
            "description",
            "standard",
            "models",
            *SETTING_NAMES,
            "archived_at",
        ]

    def get_fields(self):
        fields = super().get_fields()
        fields.update((setting.name, setting_serializer_field(setting)) for setting in CAMPAIGN_SETTINGS)
        return fields


class CampaignChangedSerializer(CampaignReviewSerializer):
    """A created or changed campaign, with warnings about what was written (e.g. a model name in a text
    annotators see)."""

    warnings = serializers.SerializerMethodField()

    class Meta(CampaignReviewSerializer.Meta):
        fields = [*CampaignReviewSerializer.Meta.fields, "warnings"]

    def get_warnings(self, campaign) -> list[str]:
        return self.context.get("warnings", [])


class GradeChangeSerializer(serializers.Serializer):
    value = StrictIntegerField(min_value=GRADE_MIN, max_value=GRADE_MAX)
    label = StrictCharField(max_length=GRADE_LABEL_MAX_LENGTH)
    description = StrictCharField(required=False, allow_blank=True)


class CampaignSettingsChangeSerializer(serializers.Serializer):
    """Any of the campaign's settings; the ones not given stay."""

    def get_fields(self):
        return {
            setting.name: setting_serializer_field(setting, request=True) for setting in CAMPAIGN_SETTINGS
        }


# The body's schema: the view reads the body with `bundle.parse_campaign_change`, as a bundle is read.
class CampaignChangeSerializer(serializers.Serializer):
    """A change to a campaign: texts, scale, any of its settings; what is not given, or null, stays."""

    description = StrictCharField(required=False, allow_null=True, allow_blank=True)
    guidelines = StrictCharField(required=False, allow_null=True, allow_blank=True)
    scale = GradeChangeSerializer(
        many=True,
        required=False,
        allow_null=True,
        min_length=2,
        help_text=f"Its grades, at least two. {SCALE_LOCK.value}",
    )
    settings = CampaignSettingsChangeSerializer(required=False, allow_null=True)


# --- The bundle: its schema (the view reads it with `bundle.parse_bundle`, as import_campaign does) -------


class BundleModelSerializer(serializers.Serializer):
    name = StrictCharField(max_length=MODEL_NAME_LENGTH, help_text=MODEL_NAME_RULE)
    role = serializers.ChoiceField(
        choices=RankingModel.Role.values, help_text="One online model, at least one experimental."
    )


class BundleIntentSerializer(serializers.Serializer):
    id = StrictCharField(max_length=INTENT_ID_LENGTH)
    text = StrictCharField(max_length=INTENT_TEXT_LENGTH)


class BundleQuerySerializer(serializers.Serializer):
    id = StrictCharField(max_length=100)
    text = StrictCharField()
    description = StrictCharField(required=False, allow_null=True, allow_blank=True)
    segment = StrictCharField(required=False, allow_null=True, allow_blank=True, max_length=100)
    weight = StrictFloatField(required=False, allow_null=True, min_value=0, help_text="Positive; default 1.")
    intents = BundleIntentSerializer(
        many=True, required=False, allow_null=True, help_text="For the diversity measures."
    )


class BundleDocumentSerializer(serializers.Serializer):
    id = StrictCharField(max_length=200)
    title = StrictCharField(required=False, allow_null=True, allow_blank=True)
    url = StrictCharField(required=False, allow_null=True, allow_blank=True)
    body = StrictCharField(required=False, allow_null=True, allow_blank=True)
    attributes = serializers.DictField(
        required=False, allow_null=True, help_text="For intra-list similarity."
    )
    popularity = StrictFloatField(required=False, allow_null=True, help_text="For novelty.")


class BundleRankingSerializer(serializers.Serializer):
    model = StrictCharField()
    query = StrictCharField()
    documents = serializers.ListField(child=StrictCharField(), help_text="Document ids, best first.")


class BundleGoldSerializer(serializers.Serializer):
    query = StrictCharField()
    document = StrictCharField(
        required=False, allow_null=True, help_text="With `grade`: a relevance gold label."
    )
    grade = StrictIntegerField(required=False, allow_null=True)
    model = StrictCharField(
        required=False, allow_null=True, help_text="With `verdict`: a side-by-side gold label."
    )
    verdict = serializers.ChoiceField(choices=VERDICTS, required=False, allow_null=True)


class BundleSerializer(serializers.Serializer):
    """A campaign as `import_campaign` reads it (the README's format)."""

    name = StrictCharField(max_length=200)
    description = StrictCharField(required=False, allow_null=True, allow_blank=True)
    guidelines = StrictCharField(required=False, allow_null=True, allow_blank=True)
    standard = StrictCharField(
        required=False,
        allow_null=True,
        allow_blank=True,
        max_length=100,
        help_text='A judging standard, e.g. "web v2".',
    )
    # null is read as not given, as the bundle parser reads it.
    scale = GradeChangeSerializer(
        many=True, required=False, allow_null=True, min_length=2, help_text="Default: 0–3."
    )
    settings = CampaignSettingsChangeSerializer(required=False, allow_null=True)
    models = BundleModelSerializer(many=True)
    queries = BundleQuerySerializer(many=True)
    documents = BundleDocumentSerializer(many=True)
    rankings = BundleRankingSerializer(many=True)
    gold = BundleGoldSerializer(many=True, required=False, allow_null=True)


class QuerySerializer(serializers.ModelSerializer):
    id = serializers.CharField(source="external_id")

    class Meta:
        model = Query
        fields = ["id", "text", "description", "segment", "weight"]


class InteractionLogUploadSerializer(serializers.Serializer):
    file = serializers.FileField(
        allow_empty_file=True,
        help_text="JSONL, one impression a line (query, model, request, position, document, clicked; "
        "optional session, dwell, cart, purchase, rating), may be gzipped.",
    )


class InteractionLogSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    source = serializers.CharField(help_text="The file's name.")
    impressions = serializers.IntegerField()
    requests = serializers.IntegerField(help_text="Result lists shown.")
    clicks = serializers.IntegerField()
    sessions = serializers.BooleanField(help_text="Whether its impressions name their sessions.")
    documents_added = serializers.IntegerField(help_text="Documents the campaign did not have before.")
    created_at = serializers.DateTimeField()


class RunUploadedSerializer(serializers.Serializer):
    model = serializers.CharField()
    rankings = serializers.IntegerField(help_text="Ranking rows written.")


class AnnotatorProgressSerializer(serializers.Serializer):
    username = serializers.CharField()
    judgments = serializers.IntegerField()
    preferences = serializers.IntegerField()
    in_progress = serializers.IntegerField()
    skipped = serializers.IntegerField()
    done = serializers.IntegerField()
    median_seconds = serializers.FloatField(allow_null=True, help_text="Median seconds per label.")
    last_active = serializers.DateTimeField(allow_null=True, help_text="When they last labelled.")
    excluded = serializers.BooleanField(
        help_text="A manager left their labels out: they count toward no task's completion."
    )


class KindProgressSerializer(serializers.Serializer):
    name = serializers.ChoiceField(choices=KIND_NAMES)
    overlap = serializers.IntegerField()
    automatic_same = serializers.IntegerField()
    tasks = serializers.IntegerField()
    complete = serializers.IntegerField(
        help_text="Tasks with enough labels (excluded annotators' aside), adjudicated, or identical lists "
        "answered Same: as the launch report counts them."
    )
    labels_left = serializers.IntegerField()


class CampaignProgressSerializer(serializers.Serializer):
    annotators = AnnotatorProgressSerializer(many=True)
    kinds = KindProgressSerializer(many=True)


# --- The annotator's tasks --------------------------------------------------------------------------------


class TaskCampaignSerializer(FieldsOnceSerializer):
    id = serializers.IntegerField()
    name = serializers.CharField()
    guidelines = serializers.CharField(allow_blank=True)


class TaskIntentSerializer(FieldsOnceSerializer):
    id = serializers.CharField()
    text = serializers.CharField()
    key = serializers.CharField(allow_blank=True, help_text="The workbench's key to tick it.")


class TaskQuerySerializer(FieldsOnceSerializer):
    text = serializers.CharField(allow_blank=True)
    description = serializers.CharField(allow_blank=True)
    intents = TaskIntentSerializer(many=True, help_text="Relevance tasks: tick those the document serves.")


class TaskDocumentSerializer(FieldsOnceSerializer):
    title = serializers.CharField(allow_blank=True)
    url = serializers.CharField(allow_blank=True, help_text="As imported: show it as a link only if is_link.")
    is_link = serializers.BooleanField(help_text="The URL is http(s).")
    body = serializers.CharField(allow_blank=True)


class TaskGradeSerializer(FieldsOnceSerializer, GradeSerializer):
    key = serializers.CharField(help_text="The workbench's keyboard key for this grade.")


class CurrentLabelSerializer(FieldsOnceSerializer):
    grade = serializers.IntegerField(required=False)
    verdict = serializers.ChoiceField(choices=SIDES, source="side", required=False)
    strength = serializers.IntegerField(required=False, allow_null=True)
    intents = serializers.ListField(child=serializers.CharField(), required=False, allow_null=True)
    duplicates = serializers.ListField(child=serializers.JSONField(), required=False)
    comment = serializers.CharField(allow_blank=True)


class OwnProgressSerializer(FieldsOnceSerializer):
    """The annotator's own labels and skips in the campaign; next-task answers 204 when nothing is left."""

    done = serializers.IntegerField()
    skipped = serializers.IntegerField()


class TaskSerializer(FieldsOnceSerializer):
    """What the annotator sees; side by side, the two lists in the order shown, never a model's name or id."""

    id = serializers.IntegerField(
        source="assignment_id", help_text="The task's id for this annotator (their assignment's id)."
    )
    kind = serializers.ChoiceField(choices=KIND_NAMES)
    status = serializers.CharField()
    expires_at = serializers.DateTimeField()
    campaign = TaskCampaignSerializer()
    query = TaskQuerySerializer()
    document = TaskDocumentSerializer(required=False, help_text="Relevance tasks.")
    scale = TaskGradeSerializer(many=True, required=False, help_text="Relevance tasks.")
    left = TaskDocumentSerializer(many=True, required=False, help_text="Side-by-side tasks.")
    right = TaskDocumentSerializer(many=True, required=False, help_text="Side-by-side tasks.")
    five_point = serializers.BooleanField(required=False, help_text="Side-by-side tasks: ask for a strength.")
    current = CurrentLabelSerializer(allow_null=True, help_text="The annotator's label, once given.")
    version = serializers.CharField(
        help_text="Send it back with a label to have a stale answer refused (409)."
    )
    progress = OwnProgressSerializer()


class AssignmentSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    kind = serializers.SerializerMethodField()
    status = serializers.CharField()
    query = serializers.SerializerMethodField()
    leased_at = serializers.DateTimeField()
    expires_at = serializers.DateTimeField()
    finished_at = serializers.DateTimeField(allow_null=True)

    def get_kind(self, assignment) -> str:
        return assignment_task(assignment)[0].name

    def get_query(self, assignment) -> str:
        return assignment.task.query.text


class LabelSerializer(FieldsOnceSerializer):
    id = serializers.IntegerField(help_text="The task's id (the assignment's).")
    kind = serializers.ChoiceField(choices=KIND_NAMES)
    grade = serializers.IntegerField(required=False)
    verdict = serializers.ChoiceField(choices=SIDES, required=False)
    strength = serializers.IntegerField(required=False, allow_null=True)
    intents = serializers.ListField(child=serializers.CharField(), required=False, allow_null=True)
    duplicates = serializers.ListField(child=serializers.JSONField(), required=False)
    comment = serializers.CharField(allow_blank=True)
    next = TaskSerializer(
        required=False,
        allow_null=True,
        help_text="Asked for with `?next=true`: your next task in the campaign, leased to you as by "
        "next-task: a label and the next task in one request. Null when nothing is left, or not asked for.",
    )


class LabelQuerySerializer(FieldsOnceSerializer):
    next = serializers.BooleanField(
        required=False, default=False, help_text="Answer with your next task in the campaign too."
    )


class SkipRequestSerializer(serializers.Serializer):
    reason = serializers.ChoiceField(choices=SkipReason.values)


# --- Review -----------------------------------------------------------------------------------------------


class RevisionSerializer(serializers.ModelSerializer):
    changed_by = serializers.CharField(source="changed_by.username")

    class Meta:
        model = LabelRevision
        fields = ["id", "kind", "changed_by", "created_at", "old_value", "new_value", "note"]


class QueueItemSerializer(serializers.Serializer):
    kind = serializers.ChoiceField(choices=KIND_NAMES)
    task_id = serializers.IntegerField(source="task_pk")
    query = serializers.CharField()
    subject = serializers.CharField(help_text="The document, or the experimental model.")
    labels = serializers.ListField(child=serializers.CharField())
    disagreement = serializers.FloatField()
    failed_gold = serializers.BooleanField()
    adjudicated = serializers.CharField(allow_null=True)
    held_by = serializers.CharField(
        allow_null=True, help_text="The reviewer who opened it lately, while their hold lasts."
    )


class ReviewDocumentSerializer(serializers.Serializer):
    id = serializers.CharField(source="external_id")
    title = serializers.CharField(allow_blank=True)
    url = serializers.CharField(allow_blank=True)
    body = serializers.CharField(allow_blank=True)


class ReviewLabelSerializer(serializers.Serializer):
    username = serializers.CharField()
    value = serializers.CharField()
    comment = serializers.CharField(allow_blank=True)
    seconds = serializers.FloatField(allow_null=True)
    created_at = serializers.DateTimeField()
    shown_left = serializers.CharField(
        allow_blank=True, help_text="Side by side: the model shown on the left."
    )


class AdjudicationSerializer(serializers.Serializer):
    reviewer = serializers.CharField()
    value = serializers.CharField()
    reason = serializers.CharField()
    updated_at = serializers.DateTimeField()


class ReviewRevisionSerializer(serializers.Serializer):
    kind = serializers.CharField()
    changed_by = serializers.CharField()
    created_at = serializers.DateTimeField()
    old_value = serializers.CharField(allow_blank=True)
    new_value = serializers.CharField()
    note = serializers.CharField(allow_blank=True)


class ReviewTaskSerializer(serializers.Serializer):
    kind = serializers.ChoiceField(choices=KIND_NAMES)
    task_id = serializers.IntegerField(source="task_pk")
    campaign = serializers.IntegerField(source="campaign.pk")
    query = serializers.CharField()
    query_description = serializers.CharField(allow_blank=True)
    gold = serializers.CharField(allow_blank=True)
    labels = ReviewLabelSerializer(many=True)
    adjudication = AdjudicationSerializer(allow_null=True)
    version = serializers.CharField(
        help_text="Send it back with a final label to have a stale one refused (409)."
    )
    held_by = serializers.CharField(
        allow_null=True, help_text="Another reviewer who opened the task lately, while their hold lasts."
    )
    history = ReviewRevisionSerializer(many=True)
    document = ReviewDocumentSerializer(allow_null=True)
    online_model = serializers.CharField(allow_blank=True)
    experimental_model = serializers.CharField(allow_blank=True)
    online_list = ReviewDocumentSerializer(many=True, allow_null=True)
    experimental_list = ReviewDocumentSerializer(many=True, allow_null=True)


# --- People and campaign administration -------------------------------------------------------------------


PERSON_ROLES = [role.value for role in Role]


class PersonSerializer(serializers.Serializer):
    id = serializers.IntegerField(source="pk")
    username = serializers.CharField()
    name = serializers.CharField(allow_blank=True)
    roles = serializers.ListField(child=serializers.CharField(), help_text='Group names, and "superuser".')
    is_active = serializers.BooleanField()
    last_login = serializers.DateTimeField(allow_null=True)
    last_label = serializers.DateTimeField(allow_null=True)
    manageable = serializers.BooleanField(help_text="You may act on them (and they are not you).")


class PersonCreateSerializer(serializers.Serializer):
    username = StrictCharField(max_length=150)
    name = StrictCharField(max_length=150, required=False, allow_blank=True, default="")
    role = serializers.ChoiceField(choices=PERSON_ROLES, help_text="Managers give annotator or reviewer.")


class PasswordLinkSerializer(serializers.Serializer):
    password_link = serializers.CharField(
        help_text="A one-time link to hand over: it sets the person's password; shown only in this answer."
    )


class PersonCreatedSerializer(PasswordLinkSerializer):
    id = serializers.IntegerField()
    username = serializers.CharField()


class PersonChangeSerializer(serializers.Serializer):
    """One change: a role (their only one from now on), or active (false signs them out everywhere)."""

    role = serializers.ChoiceField(choices=PERSON_ROLES, required=False)
    is_active = StrictBooleanField(required=False)

    def validate(self, data):
        if len(data) != 1:
            raise serializers.ValidationError(_("give exactly one of role and is_active."))
        return data


class MembersSerializer(serializers.Serializer):
    open_to_all = StrictBooleanField(help_text="Every annotator may work on it; else only `members`.")
    members = serializers.ListField(
        child=serializers.PrimaryKeyRelatedField(
            queryset=campaign_member_candidates(), pk_field=StrictIntegerField()
        ),
        help_text="Ids of active annotators and reviewers (`GET /api/people/`).",
    )


class ArchiveSerializer(serializers.Serializer):
    archived = StrictBooleanField(help_text="true: read-only and hidden from annotators; false: restore.")


class ExclusionSerializer(serializers.Serializer):
    annotator = serializers.CharField()
    excluded_by = serializers.CharField(allow_blank=True)
    reason = serializers.CharField(allow_blank=True)
    excluded_at = serializers.DateTimeField()
    confirmed = serializers.BooleanField()
    in_force = serializers.BooleanField()
    reinstated_by = serializers.CharField(allow_null=True)
    reinstated_at = serializers.DateTimeField(allow_null=True)


class ExclusionActionSerializer(serializers.Serializer):
    action = serializers.ChoiceField(
        choices=["exclude", "reinstate", "confirm"],
        help_text="exclude: leave the annotator's labels out (with a reason); reinstate: count them again; "
        "confirm: confirm every exclusion in force.",
    )
    annotator = StrictCharField(required=False, max_length=150, help_text="exclude, reinstate: a username.")
    reason = StrictCharField(required=False, allow_blank=True, max_length=5000, default="")


class LabelsImportedSerializer(serializers.Serializer):
    judgments = serializers.IntegerField(help_text="Relevance grades imported.")
    preferences = serializers.IntegerField(help_text="Side-by-side verdicts imported.")


# --- A new campaign's upload ------------------------------------------------------------------------------


class ImportUploadSerializer(serializers.Serializer):
    """The new-campaign page's upload: the bundle, and each TREC run with its model's name, in order."""

    bundle = serializers.FileField(
        help_text="The campaign bundle: JSON as import_campaign reads it, may be gzipped."
    )
    models = serializers.ListField(
        # Blank too: a lone empty value is read as no list at all; the form names a run without its model.
        child=serializers.CharField(max_length=100, allow_blank=True),
        required=False,
        default=list,
        help_text="The runs' models.",
    )
    runs = serializers.ListField(
        child=serializers.FileField(allow_empty_file=True),
        required=False,
        default=list,
        help_text="TREC runs, one per name in `models`, in its order; may be gzipped.",
    )


class ImportProgressSerializer(serializers.Serializer):
    rows = serializers.IntegerField(help_text="Ranking rows written so far.")
    total = serializers.IntegerField()


class ImportSerializer(serializers.Serializer):
    """An upload checked, then imported, in the background (`manage.py db_worker`)."""

    id = serializers.IntegerField(source="staged.pk")
    status = serializers.CharField(
        help_text="checking, ready (to confirm), invalid, importing, done, failed, cancelled, or stopped "
        "(its worker died: retry or cancel)."
    )
    status_label = serializers.CharField()
    preview = serializers.JSONField(
        allow_null=True, help_text="Once checked: what the import would create, and its warnings."
    )
    error = serializers.CharField(allow_blank=True)
    progress = ImportProgressSerializer(allow_null=True, help_text="While importing.")
    actions = serializers.ListField(
        child=serializers.ChoiceField(choices=["confirm", "retry", "cancel"]),
        help_text="What may be done now.",
    )
    campaign = serializers.IntegerField(source="staged.campaign_id", allow_null=True, help_text="Once done.")
