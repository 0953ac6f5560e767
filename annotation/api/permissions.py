"""The web pages' roles, for the API: annotators work on their own tasks, reviewers read everything and
adjudicate, managers create and configure campaigns."""

from rest_framework.permissions import BasePermission

from annotation.roles import Role, can_manage, can_review, user_has_role


class IsAnnotator(BasePermission):
    message = "Only annotators work on tasks."

    def has_permission(self, request, view) -> bool:
        return user_has_role(request.user, Role.ANNOTATOR)


class IsReviewer(BasePermission):
    message = "Only reviewers and managers see labels, metrics and models."

    def has_permission(self, request, view) -> bool:
        return can_review(request.user)


class IsManager(BasePermission):
    message = "Only managers create and configure campaigns."

    def has_permission(self, request, view) -> bool:
        return can_manage(request.user)
