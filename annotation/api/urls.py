from django.urls import path
from drf_spectacular.views import SpectacularAPIView, SpectacularRedocView, SpectacularSwaggerSplitView
from rest_framework.permissions import AllowAny

from annotation.api.views import auth, campaigns, imports, interactions, people, review, settings, tasks
from annotation.tasks import IMPORT_ACTIONS

app_name = "api"

PUBLIC = {"permission_classes": [AllowAny], "authentication_classes": []}

# Django tries the patterns in order: an annotator's label and next task first, since every label asks
# them (each pattern tried costs a request a few microseconds).
urlpatterns = [
    path("tasks/<int:task_id>/judgment/", tasks.JudgmentView.as_view(), name="judgment"),
    path("campaigns/<int:campaign_id>/next-task/", tasks.NextTaskView.as_view(), name="next_task"),
    path("schema/", SpectacularAPIView.as_view(**PUBLIC), name="schema"),
    # The split view serves its script as a file (?script): no inline script, as the CSP asks.
    path("docs/", SpectacularSwaggerSplitView.as_view(url_name="api:schema", **PUBLIC), name="docs"),
    path("redoc/", SpectacularRedocView.as_view(url_name="api:schema", **PUBLIC), name="redoc"),
    path("auth/token/", auth.TokenView.as_view(), name="token"),
    path("campaigns/", campaigns.CampaignListView.as_view(), name="campaigns"),
    path("campaigns/<int:campaign_id>/", campaigns.CampaignDetailView.as_view(), name="campaign"),
    path("campaigns/<int:campaign_id>/models/", campaigns.ModelListView.as_view(), name="models"),
    path("campaigns/<int:campaign_id>/queries/", campaigns.QueryListView.as_view(), name="queries"),
    path("campaigns/<int:campaign_id>/runs/", campaigns.RunUploadView.as_view(), name="run_upload"),
    path("campaigns/<int:campaign_id>/progress/", campaigns.ProgressView.as_view(), name="progress"),
    path(
        "campaigns/<int:campaign_id>/interactions/",
        interactions.InteractionLogListView.as_view(),
        name="interaction_logs",
    ),
    path("campaigns/<int:campaign_id>/members/", people.MembersView.as_view(), name="members"),
    path("campaigns/<int:campaign_id>/archive/", settings.ArchiveView.as_view(), name="archive"),
    path("campaigns/<int:campaign_id>/exclusions/", settings.ExclusionsView.as_view(), name="exclusions"),
    path(
        "campaigns/<int:campaign_id>/judgments/",
        settings.JudgmentsImportView.as_view(),
        name="judgments_import",
    ),
    path(
        "campaigns/<int:campaign_id>/review-queue/",
        review.ReviewQueueView.as_view(),
        name="review_queue",
    ),
    path("people/", people.PeopleView.as_view(), name="people"),
    path("people/<int:user_id>/", people.PersonView.as_view(), name="person"),
    path("people/<int:user_id>/password-link/", people.PasswordLinkView.as_view(), name="password_link"),
    path("imports/", imports.ImportsView.as_view(), name="imports"),
    path("imports/<int:import_id>/", imports.ImportView.as_view(), name="import"),
    *(
        path(
            f"imports/<int:import_id>/{action}/", imports.ImportActionView.as_view(action=action), name=action
        )
        for action in IMPORT_ACTIONS
    ),
    path("tasks/", tasks.TaskListView.as_view(), name="tasks"),
    path("tasks/<int:task_id>/", tasks.TaskDetailView.as_view(), name="task"),
    path("tasks/<int:task_id>/skip/", tasks.SkipView.as_view(), name="skip"),
    path("review/<str:kind>/<int:task_id>/", review.ReviewTaskView.as_view(), name="review_task"),
    path(
        "review/<str:kind>/<int:task_id>/adjudication/",
        review.AdjudicationView.as_view(),
        name="adjudication",
    ),
    path("review/<str:kind>/<int:task_id>/history/", review.HistoryView.as_view(), name="history"),
]
