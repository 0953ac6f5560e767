from django.urls import path
from drf_spectacular.views import SpectacularAPIView, SpectacularRedocView, SpectacularSwaggerView
from rest_framework.permissions import AllowAny

from annotation.api import views, views_review, views_tasks
from metrics import api as metrics_api

app_name = "api"

PUBLIC = {"permission_classes": [AllowAny], "authentication_classes": []}

urlpatterns = [
    path("schema/", SpectacularAPIView.as_view(**PUBLIC), name="schema"),
    path("docs/", SpectacularSwaggerView.as_view(url_name="api:schema", **PUBLIC), name="docs"),
    path("redoc/", SpectacularRedocView.as_view(url_name="api:schema", **PUBLIC), name="redoc"),
    path("auth/token/", views.TokenView.as_view(), name="token"),
    path("campaigns/", views.CampaignListView.as_view(), name="campaigns"),
    path("campaigns/<int:campaign_id>/", views.CampaignDetailView.as_view(), name="campaign"),
    path("campaigns/<int:campaign_id>/models/", views.ModelListView.as_view(), name="models"),
    path("campaigns/<int:campaign_id>/queries/", views.QueryListView.as_view(), name="queries"),
    path("campaigns/<int:campaign_id>/runs/", views.RunUploadView.as_view(), name="run_upload"),
    path("campaigns/<int:campaign_id>/progress/", views.ProgressView.as_view(), name="progress"),
    path("campaigns/<int:campaign_id>/next-task/", views_tasks.NextTaskView.as_view(), name="next_task"),
    path(
        "campaigns/<int:campaign_id>/review-queue/",
        views_review.ReviewQueueView.as_view(),
        name="review_queue",
    ),
    path(
        "campaigns/<int:campaign_id>/export/judgments/",
        metrics_api.JudgmentsExportView.as_view(),
        name="export_judgments",
    ),
    path(
        "campaigns/<int:campaign_id>/export/qrels/",
        metrics_api.QrelsExportView.as_view(),
        name="export_qrels",
    ),
    path("campaigns/<int:campaign_id>/report/", metrics_api.LaunchReportView.as_view(), name="report"),
    path("tasks/", views_tasks.TaskListView.as_view(), name="tasks"),
    path("tasks/<int:task_id>/", views_tasks.TaskDetailView.as_view(), name="task"),
    path("tasks/<int:task_id>/judgment/", views_tasks.JudgmentView.as_view(), name="judgment"),
    path("tasks/<int:task_id>/skip/", views_tasks.SkipView.as_view(), name="skip"),
    path("review/<str:kind>/<int:task_id>/", views_review.ReviewTaskView.as_view(), name="review_task"),
    path(
        "review/<str:kind>/<int:task_id>/adjudication/",
        views_review.AdjudicationView.as_view(),
        name="adjudication",
    ),
    path("review/<str:kind>/<int:task_id>/history/", views_review.HistoryView.as_view(), name="history"),
]
