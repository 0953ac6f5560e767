"""Roles are Django groups; superusers hold every role."""

from enum import StrEnum
from functools import wraps

from django.contrib.auth import get_user_model
from django.contrib.auth.backends import ModelBackend
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.db.models import StringAgg, Value


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


def role_names(groups: str) -> StringAgg:
    """The names of the groups at the path `groups` ("groups__name" from a user), as one string: read with
    the user in the same statement, for `roles_known`."""
    return StringAgg(groups, Value(","), default=Value(""))


def roles_known(user, names: str) -> None:
    """Tell `user_has_role` the user's roles, read by `role_names`: it asks no more."""
    user._judgeboard_roles = set(filter(None, names.split(",")))


class RolesBackend(ModelBackend):
    """Django's model backend, reading a signed-in user's roles with the user: every request of theirs
    asks one statement, not two."""

    def get_user(self, user_id):
        users = get_user_model()._default_manager.filter(pk=user_id)
        # A primary-key lookup: sliced, not first(), which would sort by it.
        user = next(iter(users.annotate(role_names=role_names("groups__name"))[:1]), None)
        if user is None or not self.user_can_authenticate(user):
            return None
        roles_known(user, user.role_names)
        return user


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
