from django.contrib import admin
from django.contrib.admin.utils import unquote
from django.contrib.auth import admin as auth_admin
from django.contrib.auth import get_user_model

from annotation import models
from annotation.services.tokens import token_cache_forget, tokens_revoke, user_deactivate

User = get_user_model()


class UserAdmin(auth_admin.UserAdmin):
    """Django's, but a new password or a deactivation revokes the user's API tokens, and new roles reach
    the API at once (not after API_TOKEN_CACHE_SECONDS)."""

    def save_model(self, request, obj, form, change):
        if change and "is_active" in form.changed_data and not obj.is_active:
            user_deactivate(user=obj)
        super().save_model(request, obj, form, change)

    def save_related(self, request, form, formsets, change):
        super().save_related(request, form, formsets, change)
        if change and "groups" in form.changed_data:
            token_cache_forget(user=form.instance)

    def user_change_password(self, request, id, form_url=""):
        response = super().user_change_password(request, id, form_url)
        if request.method == "POST" and response.status_code == 302:  # the form was valid and saved
            tokens_revoke(user=self.get_object(request, unquote(id)))
        return response


admin.site.unregister(User)
admin.site.register(User, UserAdmin)


@admin.register(models.Campaign)
class CampaignAdmin(admin.ModelAdmin):
    list_display = [
        "name",
        "overlap",
        "gsb_overlap",
        "pool_depth",
        "gsb_depth",
        "gain",
        "aggregation",
        "created_at",
    ]
    list_filter = ["gain", "aggregation", "gsb_scale"]
    search_fields = ["name", "description"]


@admin.register(models.RankingModel)
class RankingModelAdmin(admin.ModelAdmin):
    list_display = ["name", "role", "campaign"]
    list_filter = ["role", "campaign"]
    search_fields = ["name"]


@admin.register(models.Query)
class QueryAdmin(admin.ModelAdmin):
    list_display = ["external_id", "text", "segment", "weight", "campaign"]
    list_filter = ["campaign", "segment"]
    search_fields = ["external_id", "text", "description"]


@admin.register(models.Document)
class DocumentAdmin(admin.ModelAdmin):
    list_display = ["external_id", "title", "url", "campaign"]
    list_filter = ["campaign"]
    search_fields = ["external_id", "title", "url"]


@admin.register(models.Ranking)
class RankingAdmin(admin.ModelAdmin):
    list_display = ["query", "model", "length"]
    list_filter = ["model__campaign", "model"]
    search_fields = ["query__external_id"]
    list_select_related = ["query", "model"]
    # Written by imports only: the packed list is not for editing by hand.
    fields = readonly_fields = ("model", "query", "document_list")

    @admin.display(description="documents")
    def length(self, ranking: models.Ranking) -> int:
        return ranking.document_pks.size

    @admin.display(description="documents in rank order")
    def document_list(self, ranking: models.Ranking) -> str:
        external = models.Document.objects.in_bulk(ranking.document_pks.tolist())
        return ", ".join(external[pk].external_id for pk in ranking.document_pks.tolist())


@admin.register(models.RelevanceTask)
class RelevanceTaskAdmin(admin.ModelAdmin):
    list_display = ["id", "query", "document", "gold_grade", "campaign"]
    list_filter = ["campaign", ("gold_grade", admin.EmptyFieldListFilter)]
    search_fields = ["query__external_id", "query__text", "document__external_id", "document__title"]
    list_select_related = ["query", "document", "campaign"]
    raw_id_fields = ["query", "document"]


@admin.register(models.SideBySideTask)
class SideBySideTaskAdmin(admin.ModelAdmin):
    list_display = ["id", "query", "experimental_model", "lists_identical", "gold_verdict", "campaign"]
    list_filter = ["campaign", "lists_identical", "gold_verdict"]
    search_fields = ["query__external_id", "query__text"]
    list_select_related = ["query", "experimental_model", "campaign"]
    raw_id_fields = ["query"]


@admin.register(models.Judgment)
class JudgmentAdmin(admin.ModelAdmin):
    list_display = ["task", "annotator", "grade", "seconds_spent", "updated_at"]
    list_filter = ["campaign", "grade", "annotator"]
    search_fields = [
        "task__query__external_id",
        "task__document__external_id",
        "annotator__username",
        "comment",
    ]
    list_select_related = ["task__query", "task__document", "annotator"]
    raw_id_fields = ["task"]


@admin.register(models.Preference)
class PreferenceAdmin(admin.ModelAdmin):
    list_display = ["task", "annotator", "verdict", "strength", "experimental_on_left", "updated_at"]
    list_filter = ["campaign", "verdict", "experimental_on_left", "annotator"]
    search_fields = ["task__query__external_id", "annotator__username", "comment"]
    list_select_related = ["task__query", "task__experimental_model", "annotator"]
    raw_id_fields = ["task"]


@admin.register(models.Assignment)
class AssignmentAdmin(admin.ModelAdmin):
    list_display = [
        "id",
        "annotator",
        "relevance_task",
        "side_by_side_task",
        "status",
        "leased_at",
        "expires_at",
    ]
    list_filter = ["status", "skip_reason", "annotator"]
    raw_id_fields = ["relevance_task", "side_by_side_task"]


@admin.register(models.Adjudication)
class AdjudicationAdmin(admin.ModelAdmin):
    list_display = ["id", "relevance_task", "side_by_side_task", "grade", "verdict", "reviewer", "updated_at"]
    list_filter = ["reviewer"]
    search_fields = ["reason"]
    raw_id_fields = ["relevance_task", "side_by_side_task"]


@admin.register(models.LabelRevision)
class LabelRevisionAdmin(admin.ModelAdmin):
    list_display = [
        "created_at",
        "kind",
        "changed_by",
        "old_value",
        "new_value",
        "relevance_task",
        "side_by_side_task",
    ]
    list_filter = ["kind", "changed_by"]
    raw_id_fields = ["relevance_task", "side_by_side_task"]
