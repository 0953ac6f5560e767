from django.urls import path

from metrics.views import behaviour, explorer, launch, quality

app_name = "metrics"

urlpatterns = [
    path("campaigns/<int:campaign_id>/quality/", quality.quality, name="campaign_quality"),
    path("campaigns/<int:campaign_id>/", launch.overview, name="campaign_overview"),
    path("campaigns/<int:campaign_id>/decision/", launch.decision_badge, name="decision_badge"),
    path("campaigns/<int:campaign_id>/compare/<str:model>/", launch.comparison, name="comparison"),
    path(
        "campaigns/<int:campaign_id>/compare/<str:model>/report.<str:format>",
        launch.report_download,
        name="launch_report",
    ),
    path("campaigns/<int:campaign_id>/behaviour/", behaviour.behaviour, name="campaign_behaviour"),
    path("campaigns/<int:campaign_id>/queries/", explorer.explorer, name="query_explorer"),
    path("campaigns/<int:campaign_id>/queries/<int:query_id>/", launch.query_detail, name="query_drilldown"),
]
