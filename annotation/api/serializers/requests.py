"""Request bodies: a token's sign-in, a run's upload, a label, an adjudication."""

from rest_framework import serializers

from annotation.api.serializers.fields import VERDICTS, StrictCharField, StrictFloatField, StrictIntegerField
from annotation.services.labels import SIDES
from plumbing.serializers import FieldsOnceSerializer


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
