from django.urls import path

from annotation import views, views_review

app_name = "annotation"

urlpatterns = [
    path("", views.home, name="home"),
    path("healthz", views.healthz, name="healthz"),
    path("campaigns/<int:campaign_id>/work/", views.work, name="work"),
    path("campaigns/<int:campaign_id>/tasks/<int:assignment_id>/", views.task, name="task"),
    path("campaigns/<int:campaign_id>/tasks/<int:assignment_id>/skip/", views.task_skip, name="task_skip"),
    path("campaigns/<int:campaign_id>/progress/", views.progress, name="progress"),
    path("campaigns/<int:campaign_id>/review/", views_review.queue, name="review_queue"),
    path("review/relevance/<int:task_id>/", views_review.relevance, name="review_relevance"),
    path("review/side-by-side/<int:task_id>/", views_review.side_by_side, name="review_side_by_side"),
]
