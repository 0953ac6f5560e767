"""API tokens: one per user, created on first login, revoked when the password changes or the account is
deactivated, and expired after API_TOKEN_DAYS (0: never). Set-password links die on deactivation too."""

import hashlib
from datetime import timedelta

from django.conf import settings
from django.core.cache import cache
from django.db import IntegrityError, transaction
from django.db.models import F
from django.utils import timezone
from rest_framework.authtoken.models import Token

from annotation.models import PasswordLink
from annotation.roles import user_cache_key


def token_expired(*, token: Token) -> bool:
    days = settings.API_TOKEN_DAYS
    return bool(days) and token.created <= timezone.now() - timedelta(days=days)


def token_get_or_create(*, user) -> Token:
    """The user's token, a new one if it expired; two first logins at once both get the one that won the
    insert."""
    token = Token.objects.filter(user=user).first()
    if token is not None and not token_expired(token=token):
        return token
    try:
        with transaction.atomic():
            if token is not None:
                token.delete()
            return Token.objects.create(user=user)
    except IntegrityError:
        return Token.objects.get(user=user)


def token_cache_key(key: str) -> str:
    """Where a token's user is cached (`ExpiringTokenAuthentication`): a hash, never the token itself."""
    return "api-token:" + hashlib.sha256(key.encode()).hexdigest()


def token_cache_forget(*, user) -> None:
    """Drop the cached copies of the user and roles as they stood: their tokens' and their sessions'
    (`roles.RolesBackend`)."""
    cached = [token_cache_key(key) for key in Token.objects.filter(user=user).values_list("key", flat=True)]
    cached.append(user_cache_key(user.pk))
    cache.delete_many(cached)
    # Again once committed: a request meanwhile may have cached a token as it still stood.
    transaction.on_commit(lambda: cache.delete_many(cached))


def tokens_revoke(*, user) -> None:
    """The user's tokens stop working; the next sign-in gets a new one."""
    token_cache_forget(user=user)
    Token.objects.filter(user=user).delete()


def user_password_set(*, user, password: str) -> None:
    """A new password; the user's tokens go with the old one."""
    with transaction.atomic():
        user.set_password(password)
        user.save(update_fields=["password"])
        tokens_revoke(user=user)


def password_links_revoke(*, user) -> None:
    """Every set-password link made for the user so far stops working (`annotation.password_links`)."""
    PasswordLink.objects.get_or_create(user=user)
    PasswordLink.objects.filter(user=user).update(generation=F("generation") + 1)


def user_deactivate(*, user) -> None:
    """Signed out of the API, and no set-password link made before works, after a reactivation either."""
    with transaction.atomic():
        user.is_active = False
        user.save(update_fields=["is_active"])
        tokens_revoke(user=user)
        password_links_revoke(user=user)
