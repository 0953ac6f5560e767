from django.urls import path

from annotation.views import campaigns, imports, interactions, people, review, settings, workbench

app_name = "annotation"

urlpatterns = [
    path("", campaigns.home, name="home"),
    path("healthz", campaigns.healthz, name="healthz"),
    path("campaigns/<int:campaign_id>/work/", workbench.work, name="work"),
    path("campaigns/<int:campaign_id>/work/progress/", workbench.work_progress, name="work_progress"),
    path("campaigns/<int:campaign_id>/tasks/<int:assignment_id>/", workbench.task, name="task"),
    path(
        "campaigns/<int:campaign_id>/tasks/<int:assignment_id>/skip/", workbench.task_skip, name="task_skip"
    ),
    path(
        "campaigns/<int:campaign_id>/tasks/<int:assignment_id>/unskip/",
        workbench.skip_undo,
        name="skip_undo",
    ),
    path("campaigns/<int:campaign_id>/progress/", campaigns.progress, name="progress"),
    path("campaigns/<int:campaign_id>/labels/stamp/", campaigns.label_stamp, name="label_stamp"),
    path("campaigns/<int:campaign_id>/members/", people.members, name="campaign_members"),
    path("campaigns/<int:campaign_id>/settings/", settings.campaign_settings, name="campaign_settings"),
    path(
        "campaigns/<int:campaign_id>/interactions/", interactions.interactions, name="campaign_interactions"
    ),
    path(
        "campaigns/<int:campaign_id>/interactions/<int:log_id>/delete/",
        interactions.interaction_log_remove,
        name="interaction_log_delete",
    ),
    path("campaigns/<int:campaign_id>/archive/", settings.archive, name="campaign_archive"),
    path("campaigns/<int:campaign_id>/exclusions/", settings.exclusions, name="campaign_exclusions"),
    path("campaigns/new/", imports.campaign_new, name="campaign_new"),
    path("campaigns/new/template.json", imports.campaign_template, name="campaign_template"),
    path("campaigns/imports/<int:import_id>/", imports.campaign_import, name="campaign_import"),
    path(
        "campaigns/imports/<int:import_id>/status/",
        imports.campaign_import_status,
        name="campaign_import_status",
    ),
    path("people/", people.people, name="people"),
    path("people/<int:user_id>/", people.person, name="person"),
    path("campaigns/<int:campaign_id>/review/", review.queue, name="review_queue"),
    path("review/relevance/<int:task_id>/", review.relevance, name="review_relevance"),
    path("review/side-by-side/<int:task_id>/", review.side_by_side, name="review_side_by_side"),
]
