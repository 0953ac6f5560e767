"""The annotator's tasks: a task with its query, documents and progress, a label, a skip."""

from rest_framework import serializers

from annotation.api.serializers.campaigns import GradeSerializer
from annotation.models import SkipReason
from annotation.services.labels import SIDES
from annotation.task_kinds import KIND_NAMES, assignment_task
from plumbing.serializers import FieldsOnceSerializer


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
