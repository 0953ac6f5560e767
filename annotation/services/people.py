"""People and campaign membership, managed by managers in the browser: add a person with a one-time
set-password link, reset a password the same way, deactivate and reactivate, change a role, choose a
campaign's members. Who may act on whom is `roles.may_manage` (a manager manages annotators and reviewers,
only a superuser managers and superusers), and nobody acts on themselves here: each action checks it."""

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.contrib.auth.validators import UnicodeUsernameValidator
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import IntegrityError, transaction
from django.urls import reverse
from django.utils.encoding import force_bytes
from django.utils.http import urlsafe_base64_encode
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from annotation.errors import InputError, InputErrorCode
from annotation.models import Campaign, Profile
from annotation.password_links import password_link_tokens
from annotation.roles import Role, may_manage
from annotation.services.read_only import campaign_writable_lock
from annotation.services.tokens import (
    password_links_revoke,
    token_cache_forget,
    tokens_revoke,
    user_deactivate,
)

ONLY_SUPERUSERS = gettext_lazy("Only a superuser manages managers and superusers.")


def password_set_path(*, user) -> str:
    """The path of the set-password page for `user`, on a new link: every link made before stops working.
    It works until it is used, a newer one is made, the person is deactivated, or PASSWORD_RESET_TIMEOUT
    runs out (`annotation.password_links`)."""
    password_links_revoke(user=user)
    uid = urlsafe_base64_encode(force_bytes(user.pk))
    return reverse("password_set", args=[uid, password_link_tokens.make_token(user)])


def _person_to_change(*, by, user):
    """`user`, locked until the change commits, once the rules let `by` act on them."""
    user = get_user_model().objects.select_for_update(no_key=True).get(pk=user.pk)
    if user.pk == by.pk:
        raise InputError(
            InputErrorCode.INVALID_VALUE,
            "You cannot change your own account here; your password is changed on the password page.",
            field="user",
        )
    roles = user.groups.values_list("name", flat=True)
    if not may_manage(by, roles=roles, is_superuser=user.is_superuser):
        raise PermissionDenied(ONLY_SUPERUSERS)
    return user


def _username_taken(username: str) -> InputError:
    User = get_user_model()
    taken = User.objects.filter(username__iexact=username).values_list("username", flat=True).first()
    if taken is None or taken == username:
        message = _("%(name)s is taken.") % {"name": repr(username)}
    else:
        message = _("%(name)s is taken: %(taken)s differs from it only in case.") % {
            "name": repr(username),
            "taken": repr(taken),
        }
    return InputError(InputErrorCode.ALREADY_EXISTS, message, field="username")


@transaction.atomic
def person_create(*, by, username: str, name: str, role: Role) -> tuple:
    """A new person in one role, without a usable password; returns them and their set-password path.
    Usernames are unique whatever their case (`MANAGER` beside `manager` is refused)."""
    if not may_manage(by, roles=[role], is_superuser=False):
        raise PermissionDenied(ONLY_SUPERUSERS)
    try:
        UnicodeUsernameValidator()(username)
    except ValidationError as error:
        raise InputError(InputErrorCode.INVALID_VALUE, error.messages[0], field="username") from None
    User = get_user_model()
    if User.objects.filter(username__iexact=username).exists():
        raise _username_taken(username)
    first, _, last = name.strip().partition(" ")
    try:
        with transaction.atomic():
            user = User.objects.create(username=username, first_name=first, last_name=last.strip())
    except IntegrityError:  # taken meanwhile
        raise _username_taken(username) from None
    user.set_unusable_password()
    user.save(update_fields=["password"])
    user.groups.add(Group.objects.get(name=role))
    return user, password_set_path(user=user)


@transaction.atomic
def person_password_reset(*, by, user) -> str:
    """The old password and API tokens stop working; returns the new set-password path."""
    user = _person_to_change(by=by, user=user)
    if not user.is_active:
        raise InputError(
            InputErrorCode.INVALID_VALUE,
            f"Activate {user.username} before resetting their password.",
            field="user",
        )
    user.set_unusable_password()
    user.save(update_fields=["password"])
    tokens_revoke(user=user)
    return password_set_path(user=user)


@transaction.atomic
def person_active_set(*, by, user, active: bool) -> None:
    """Deactivating signs the person out of the API too, and ends their set-password links."""
    user = _person_to_change(by=by, user=user)
    if not active:
        user_deactivate(user=user)
    elif not user.is_active:
        user.is_active = True
        user.save(update_fields=["is_active"])


@transaction.atomic
def person_role_set(*, by, user, role: Role) -> None:
    """The person holds `role` and no other; their API tokens see it at once."""
    user = _person_to_change(by=by, user=user)
    if not may_manage(by, roles=[role], is_superuser=False):
        raise PermissionDenied(ONLY_SUPERUSERS)
    user.groups.set([Group.objects.get(name=role)])
    token_cache_forget(user=user)


@transaction.atomic
def campaign_members_set(*, campaign: Campaign, open_to_all: bool, members) -> None:
    """Who may annotate the campaign: every annotator when open, else its members."""
    campaign_writable_lock(campaign=campaign)
    campaign.open_to_all = open_to_all
    campaign.save(update_fields=["open_to_all"])
    campaign.members.set(members)


@transaction.atomic
def person_language_set(*, user, language: str) -> None:
    """`user`'s pages are in `language` (a code of `settings.LANGUAGES`) from their next sign-in on too."""
    Profile.objects.update_or_create(user=user, defaults={"language": language})
