"""Campaigns: their settings as fields, lists, details and changes, their queries, interaction logs, runs and
progress."""

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from annotation.api.serializers.fields import StrictCharField, StrictFloatField, StrictIntegerField
from annotation.bundle.campaign import GRADE_LABEL_MAX_LENGTH, GRADE_MAX, GRADE_MIN
from annotation.campaign_settings import CAMPAIGN_SETTINGS, SCALE_LOCK, SETTING_NAMES, Kind, Setting
from annotation.models import Campaign, Query, RankingModel
from annotation.task_kinds import KIND_NAMES


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
