"""A campaign's bundle (its schema: the view reads it with `bundle.parse_bundle`, as import_campaign does),
its queries, interaction logs, runs and progress."""

from rest_framework import serializers

from annotation.api.serializers.campaigns import CampaignSettingsChangeSerializer, GradeChangeSerializer
from annotation.api.serializers.fields import VERDICTS, StrictCharField, StrictFloatField, StrictIntegerField
from annotation.bundle.campaign import (
    INTENT_ID_LENGTH,
    INTENT_TEXT_LENGTH,
    MODEL_NAME_LENGTH,
    MODEL_NAME_RULE,
)
from annotation.models import Query, RankingModel
from annotation.task_kinds import KIND_NAMES


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
