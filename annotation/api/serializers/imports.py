"""A new campaign's upload and its import."""

from rest_framework import serializers


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
