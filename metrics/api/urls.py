"""Routes of the metrics API, mounted under /api/ beside the annotation API (config/urls.py)."""

from django.urls import path

from metrics.api import views

app_name = "metrics_api"

urlpatterns = [
    path(
        "campaigns/<int:campaign_id>/export/judgments/",
        views.JudgmentsExportView.as_view(),
        name="export_judgments",
    ),
    path(
        "campaigns/<int:campaign_id>/export/qrels/",
        views.QrelsExportView.as_view(),
        name="export_qrels",
    ),
    path(
        "campaigns/<int:campaign_id>/export/behaviour-qrels/",
        views.BehaviourQrelsExportView.as_view(),
        name="export_behaviour_qrels",
    ),
    path(
        "campaigns/<int:campaign_id>/export/intent-qrels/",
        views.IntentQrelsExportView.as_view(),
        name="export_intent_qrels",
    ),
    path("campaigns/<int:campaign_id>/report/", views.LaunchReportView.as_view(), name="report"),
    path("campaigns/<int:campaign_id>/behaviour/", views.BehaviourView.as_view(), name="behaviour"),
    path(
        "campaigns/<int:campaign_id>/report/<str:format>/",
        views.LaunchReportFileView.as_view(),
        name="report_file",
    ),
    path("campaigns/<int:campaign_id>/decision/", views.DecisionView.as_view(), name="decision"),
]
