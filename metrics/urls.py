from django.urls import path

from metrics.views import quality

app_name = "metrics"

urlpatterns = [
    path("campaigns/<int:campaign_id>/quality/", quality.quality, name="campaign_quality"),
]
