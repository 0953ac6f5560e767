"""The shapes of the metrics API's answers: the launch decision, and the launch report as the JSON format
writes it (`metrics/reports/data.py`). The report is rendered by `report_json`; its serializers type the
schema, and Schemathesis checks the served report against them."""

from rest_framework import serializers

from annotation.api.serializers.campaigns import setting_serializer_field
from annotation.campaign_settings import CAMPAIGN_SETTINGS
from metrics.compute.decision import Outcome

OUTCOMES = [outcome.value for outcome in Outcome]


def _number(**options) -> serializers.FloatField:
    return serializers.FloatField(allow_null=True, **options)


def _interval() -> serializers.ListField:
    return serializers.ListField(
        child=_number(), min_length=2, max_length=2, help_text="The 95% interval: [low, high]."
    )


class CoverageSerializer(serializers.Serializer):
    queries = serializers.IntegerField()
    evaluated_queries = serializers.IntegerField(help_text="With at least one aggregated label.")
    relevance_tasks = serializers.IntegerField()
    labelled_tasks = serializers.IntegerField()
    judgments = serializers.IntegerField()
    side_by_side_tasks = serializers.IntegerField()
    identical_tasks = serializers.IntegerField()
    verdicts = serializers.IntegerField()
    complete_queries = serializers.IntegerField(help_text="Queries whose tasks are all complete at overlap.")
    side_by_side_complete = serializers.IntegerField()
    side_by_side_share = serializers.FloatField()
    relevance_complete = serializers.IntegerField()
    relevance_share = serializers.FloatField()
    labels_outstanding = serializers.IntegerField(help_text="Labels the decision still waits for.")


class FingerprintSerializer(serializers.Serializer):
    labels = serializers.IntegerField()
    sha256 = serializers.CharField(help_text="Changes whenever any label does.")


class ProvisionalDecisionSerializer(serializers.Serializer):
    status = serializers.ChoiceField(choices=OUTCOMES, source="decision")
    headline = serializers.CharField(required=False, help_text='e.g. "No launch: significantly worse".')
    reasons = serializers.ListField(child=serializers.CharField())
    more_queries = serializers.IntegerField(
        required=False, help_text="Inconclusive: about how many more queries would likely settle it."
    )


class DecisionSerializer(ProvisionalDecisionSerializer):
    """The launch decision for one experimental model, with what it rests on."""

    campaign = serializers.IntegerField(source="campaign.id")
    model = serializers.CharField(source="campaign.model", allow_null=True)
    provisional = ProvisionalDecisionSerializer(
        required=False, help_text="While collecting: what the rule would decide on the labels so far."
    )
    coverage = CoverageSerializer()
    fingerprint = FingerprintSerializer()
    generated_at = serializers.DateTimeField()


class ReportProvisionalSerializer(serializers.Serializer):
    decision = serializers.ChoiceField(choices=OUTCOMES)
    headline = serializers.CharField(required=False)
    reasons = serializers.ListField(child=serializers.CharField())
    more_queries = serializers.IntegerField(required=False)


class ReportDecisionSerializer(ReportProvisionalSerializer):
    provisional = ReportProvisionalSerializer(required=False)


class MetricSerializer(serializers.Serializer):
    mean = _number()
    ci95 = _interval()
    per_query = serializers.DictField(child=_number(), help_text="By query id.")


class ModelReportSerializer(serializers.Serializer):
    role = serializers.CharField()
    metrics = serializers.DictField(child=MetricSerializer(), help_text="By measure name.")


class DeltaSerializer(serializers.Serializer):
    mean = _number()
    ci95 = _interval()
    p_value = _number()
    online = _number()
    experimental = _number()
    wins = serializers.IntegerField()
    ties = serializers.IntegerField()
    losses = serializers.IntegerField()
    queries = serializers.IntegerField()


class GSBSerializer(serializers.Serializer):
    good = serializers.IntegerField()
    same = serializers.IntegerField()
    bad = serializers.IntegerField()
    score = _number()
    ci95 = _interval()
    p_value = _number()
    judgments = serializers.IntegerField()
    queries = serializers.IntegerField()
    changed_queries = serializers.IntegerField()
    changed_share = _number()
    changed_score = _number()
    identical_queries = serializers.IntegerField()
    majority_score = _number()
    weighted_score = _number()


class GSBSegmentsSerializer(GSBSerializer):
    segments = serializers.DictField(child=GSBSerializer(), help_text="By query segment.")


class LosingQuerySerializer(serializers.Serializer):
    query = serializers.CharField()
    text = serializers.CharField(allow_blank=True)
    online = _number()
    experimental = _number()
    delta = _number()


class ComparisonSerializer(ReportDecisionSerializer):
    deltas = serializers.DictField(child=DeltaSerializer(), help_text="By measure name.")
    gsb = GSBSegmentsSerializer()
    losing_queries = LosingQuerySerializer(many=True)


class AgreementFigureSerializer(serializers.Serializer):
    value = _number()
    ci95 = _interval()
    tasks = serializers.IntegerField()
    undefined = serializers.CharField(allow_null=True, help_text="Why the value is null.")


class AgreementSerializer(serializers.Serializer):
    relevance = serializers.DictField(child=AgreementFigureSerializer(), required=False)
    side_by_side = serializers.DictField(child=AgreementFigureSerializer(), required=False)


class AggregationSerializer(serializers.Serializer):
    method = serializers.CharField()
    converged = serializers.BooleanField(allow_null=True)
    fell_back = serializers.BooleanField(allow_null=True)


class ExclusionRecordSerializer(serializers.Serializer):
    annotator = serializers.CharField()
    reason = serializers.CharField(allow_blank=True)
    excluded_by = serializers.CharField(allow_null=True)
    excluded_at = serializers.DateTimeField()
    confirmed = serializers.BooleanField()
    reinstated_by = serializers.CharField(allow_null=True)
    reinstated_at = serializers.DateTimeField(allow_null=True)


class ExclusionsSerializer(serializers.Serializer):
    left_out = serializers.ListField(child=serializers.CharField())
    record = ExclusionRecordSerializer(many=True)


class ReuseSerializer(serializers.Serializer):
    standard = serializers.CharField(allow_blank=True)
    labels = serializers.IntegerField()
    judgments = serializers.IntegerField()
    preferences = serializers.IntegerField()
    relevance_tasks = serializers.IntegerField()
    side_by_side_tasks = serializers.IntegerField()


class ReportGradeSerializer(serializers.Serializer):
    value = serializers.IntegerField()
    label = serializers.CharField()


class ReportSettingsSerializer(serializers.Serializer):
    """The scale and the settings the report shows (`CAMPAIGN_SETTINGS`' `report`)."""

    scale = ReportGradeSerializer(many=True)

    def get_fields(self):
        fields = super().get_fields()
        for setting in CAMPAIGN_SETTINGS:
            if setting.report:
                fields[setting.name] = setting_serializer_field(setting)
        return fields


class ReportCampaignSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()
    model = serializers.CharField(allow_null=True, help_text="The experimental model decided on.")
    coverage = CoverageSerializer()


class ReportSerializer(ReportDecisionSerializer):
    """The launch report as the JSON download of the comparison page."""

    campaign = ReportCampaignSerializer()
    generated_at = serializers.DateTimeField()
    fingerprint = FingerprintSerializer()
    coverage = CoverageSerializer()
    models = serializers.DictField(child=ModelReportSerializer(), help_text="By model name.")
    comparisons = serializers.DictField(
        child=ComparisonSerializer(), help_text="By experimental model name, each against the online one."
    )
    agreement = AgreementSerializer()
    aggregation = AggregationSerializer()
    exclusions = ExclusionsSerializer()
    reuse = ReuseSerializer()
    settings = ReportSettingsSerializer()
    behaviour = serializers.JSONField(
        allow_null=True,
        help_text="What users did (null without interaction logs): online metrics per model, experimental − "
        "online, propensities, guardrails, judges against users per query, labels from behaviour. "
        "docs/interactions.md.",
    )
