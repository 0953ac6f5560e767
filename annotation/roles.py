"""Roles are Django groups; superusers hold every role."""

import functools
from collections.abc import Iterable
from enum import StrEnum
from functools import wraps
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.backends import ModelBackend
from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import Group
from django.core.cache import cache
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import connection
from django.db.models import Model
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


def roles_known(user, names: Iterable[str | None]) -> None:
    """Tell `user_has_role` the user's roles, read with the user (`user_with_roles`): it asks no more.
    Empty names (a user in no group) are none."""
    user._judgeboard_roles = set(filter(None, names))


# A user and the names of their groups: a row per group (one with no name when they have none); with an
# `owner` (a model with a `user` key, such as an API token), its row first, found by its primary key.
_USER_WITH_ROLES = """SELECT {owner}{user}, g.name FROM {source}
LEFT JOIN {membership_table} m ON m.{membership_user} = u.id
LEFT JOIN {group_table} g ON g.id = m.{membership_group}
WHERE {key} = %s"""


@functools.cache
def _user_with_roles_sql(owner: type[Model] | None) -> str:
    user_model = get_user_model()
    membership = user_model.groups.through._meta  # type: ignore[attr-defined]  # the m2m's manager
    users = user_model._meta.db_table
    if owner is None:
        columns, source, key = "", f"{users} u", "u.id"
    else:
        user_column = owner._meta.get_field("user").column  # type: ignore[union-attr]  # a ForeignKey
        columns = rows.select_list(owner, "o") + ", "
        source = f'{owner._meta.db_table} o JOIN {users} u ON u.id = o."{user_column}"'
        key = f'o."{owner._meta.pk.column}"'
    return _USER_WITH_ROLES.format(
        owner=columns,
        user=rows.select_list(user_model, "u"),
        source=source,
        key=key,
        membership_table=membership.db_table,
        membership_user=membership.get_field("user").column,  # type: ignore[union-attr]  # a ForeignKey
        membership_group=membership.get_field("group").column,  # type: ignore[union-attr]  # a ForeignKey
        group_table=Group._meta.db_table,
    )


def user_with_roles[M: Model](key, owner: type[M] | None = None) -> tuple[M | None, Any]:
    """The user whose id is `key`, or with `owner`, the `owner` row whose primary key is `key` and its user
    (set as its `user`), in one plain statement (`plumbing.rows`), not two or three built by the ORM; the
    user's roles known (`roles_known`). (None, None) when there is no such row."""
    with connection.cursor() as cursor:
        cursor.execute(_user_with_roles_sql(owner), [key])
        found = cursor.fetchall()
    if not found:
        return None, None
    owned, start = rows.instance_at(owner, found[0]) if owner is not None else (None, 0)
    user, _ = rows.instance_at(get_user_model(), found[0], start)
    roles_known(user, (row[-1] for row in found))
    if owned is not None:
        owned._meta.get_field("user").set_cached_value(owned, user)  # type: ignore[union-attr]  # a ForeignKey
    return owned, user


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
        _, user = user_with_roles(user_id)
        if user is None or not self.user_can_authenticate(user):
            return None  # never cached: a reactivation is seen at once
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
