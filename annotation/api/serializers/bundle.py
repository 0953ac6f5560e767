"""A campaign's bundle: its schema (the view reads it with `bundle.parse_bundle`, as import_campaign does)."""

from rest_framework import serializers

from annotation.api.serializers.campaigns import CampaignSettingsChangeSerializer, GradeChangeSerializer
from annotation.api.serializers.fields import VERDICTS, StrictCharField, StrictFloatField, StrictIntegerField
from annotation.bundle.campaign import (
    INTENT_ID_LENGTH,
    INTENT_TEXT_LENGTH,
    MODEL_NAME_LENGTH,
    MODEL_NAME_RULE,
)
from annotation.models import RankingModel


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
