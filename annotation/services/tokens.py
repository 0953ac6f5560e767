"""API tokens: one per user, created on first login."""

from django.db import IntegrityError, transaction
from rest_framework.authtoken.models import Token


def token_get_or_create(*, user) -> Token:
    """The user's token; two first logins at once both get the one that won the insert."""
    token = Token.objects.filter(user=user).first()
    if token is not None:
        return token
    try:
        with transaction.atomic():
            return Token.objects.create(user=user)
    except IntegrityError:
        return Token.objects.get(user=user)
