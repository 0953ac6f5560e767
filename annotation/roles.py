"""Roles are Django groups; superusers hold every role."""

from enum import StrEnum
from functools import wraps

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied


class Role(StrEnum):
    ANNOTATOR = "annotator"
    REVIEWER = "reviewer"
    MANAGER = "manager"


def user_has_role(user, *roles: Role) -> bool:
    if not user.is_authenticated:
        return False
    if user.is_superuser:
        return True
    names = getattr(user, "_judgeboard_roles", None)
    if names is None:
        names = set(user.groups.values_list("name", flat=True))
        user._judgeboard_roles = names  # one query per request, not per check
    return any(role in names for role in roles)


def can_annotate(user) -> bool:
    return user_has_role(user, Role.ANNOTATOR)


def can_review(user) -> bool:
    """Reviewers and managers read every label, metric and model name."""
    return user_has_role(user, Role.REVIEWER, Role.MANAGER)


def can_manage(user) -> bool:
    return user_has_role(user, Role.MANAGER)


def role_required(check):
    """View decorator: log in first, then 403 unless `check(user)` holds (e.g. `can_review`)."""

    def decorator(view):
        @wraps(view)
        @login_required
        def wrapped(request, *args, **kwargs):
            if not check(request.user):
                raise PermissionDenied
            return view(request, *args, **kwargs)

        return wrapped

    return decorator
