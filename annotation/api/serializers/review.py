"""Review: the queue, a task's labels and revisions, an adjudication."""

from rest_framework import serializers

from annotation.models import LabelRevision
from annotation.task_kinds import KIND_NAMES


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
