"""Roles are Django groups; superusers hold every role."""

import functools
from collections.abc import Iterable
from enum import StrEnum
from functools import wraps

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.backends import ModelBackend
from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import Group
from django.core.cache import cache
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import connection
from django.db.models import StringAgg, Value
from django.utils.translation import pgettext_lazy

from plumbing import rows


class Role(StrEnum):
    ANNOTATOR = "annotator"
    REVIEWER = "reviewer"
    MANAGER = "manager"


# A role as the pages name it (the group's name stays English).
ROLE_LABELS = {
    Role.ANNOTATOR: pgettext_lazy("role", "annotator"),
    Role.REVIEWER: pgettext_lazy("role", "reviewer"),
    Role.MANAGER: pgettext_lazy("role", "manager"),
}


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


def roles_known(user, names: Iterable[str | None]) -> None:
    """Tell `user_has_role` the user's roles, read with the user (`role_names`, `RolesBackend`): it asks no
    more. Empty names (a user in no group) are none."""
    user._judgeboard_roles = set(filter(None, names))


# The user and the names of their groups: a row per group (one with no name when they have none).
_USER_WITH_ROLES = """SELECT {user}, g.name FROM {user_table} u
LEFT JOIN {membership_table} m ON m.{membership_user} = u.id
LEFT JOIN {group_table} g ON g.id = m.{membership_group}
WHERE u.id = %s"""


@functools.cache
def _user_with_roles_sql() -> str:
    user_model = get_user_model()
    membership = user_model.groups.through._meta  # type: ignore[attr-defined]  # the m2m's manager
    return _USER_WITH_ROLES.format(
        user=rows.select_list(user_model, "u"),
        user_table=user_model._meta.db_table,
        membership_table=membership.db_table,
        membership_user=membership.get_field("user").column,  # type: ignore[union-attr]  # a ForeignKey
        membership_group=membership.get_field("group").column,  # type: ignore[union-attr]  # a ForeignKey
        group_table=Group._meta.db_table,
    )


def user_cache_key(user_id) -> str:
    """Where a signed-in user with their roles is cached (`RolesBackend.get_user`)."""
    return f"signed-in-user:{user_id}"


class RolesBackend(ModelBackend):
    """Django's model backend, reading a signed-in user's roles with the user: every request of theirs
    asks one plain statement (`plumbing.rows`), not two built by the ORM; with Redis, none for
    API_TOKEN_CACHE_SECONDS, as an API token's user (`services.tokens.token_cache_forget` drops the copy
    on a new password, a deactivation or new roles)."""

    def get_user(self, user_id):
        try:
            user_id = get_user_model()._meta.pk.to_python(user_id)
        except ValidationError:
            return None
        seconds = settings.API_TOKEN_CACHE_SECONDS
        user = cache.get(user_cache_key(user_id)) if seconds else None
        if user is not None:
            return user
        with connection.cursor() as cursor:
            cursor.execute(_user_with_roles_sql(), [user_id])
            found = cursor.fetchall()
        if not found:
            return None
        user, _ = rows.instance_at(get_user_model(), found[0])
        if not self.user_can_authenticate(user):
            return None  # never cached: a reactivation is seen at once
        roles_known(user, (row[-1] for row in found))
        if seconds:
            cache.set(user_cache_key(user_id), user, seconds)
        return user


def can_annotate(user) -> bool:
    return user_has_role(user, Role.ANNOTATOR)


def can_review(user) -> bool:
    """Reviewers and managers read every label, metric and model name."""
    return user_has_role(user, Role.REVIEWER, Role.MANAGER)


def can_manage(user) -> bool:
    return user_has_role(user, Role.MANAGER)


def may_manage(by, *, roles: Iterable[str], is_superuser: bool) -> bool:
    """The People page's rule: a manager manages annotators and reviewers (and people with no role); only a
    superuser manages managers and superusers. `roles` and `is_superuser` are the person's, or the role
    about to be given. Acting on oneself is refused apart (the services' check)."""
    if is_superuser or Role.MANAGER in roles:
        return bool(by.is_superuser)
    return can_manage(by)


def roles_grantable(by) -> list[Role]:
    """The roles `by` may give a person: annotator and reviewer, and manager too for a superuser."""
    return [role for role in Role if may_manage(by, roles=[role], is_superuser=False)]


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
