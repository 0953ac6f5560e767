"""Token authentication that refuses tokens older than API_TOKEN_DAYS, and reads a token's user with their
roles in one statement, or from the cache for API_TOKEN_CACHE_SECONDS (Redis only)."""

from django.conf import settings
from django.core.cache import cache
from rest_framework import exceptions
from rest_framework.authentication import TokenAuthentication

from annotation.roles import user_with_roles
from annotation.services.tokens import token_cache_key, token_expired


class ExpiringTokenAuthentication(TokenAuthentication):
    def authenticate_credentials(self, key):
        seconds = settings.API_TOKEN_CACHE_SECONDS
        token = cache.get(token_cache_key(key)) if seconds else None
        if token is None:
            # As TokenAuthentication's, with the user's roles in the same statement.
            token, _ = user_with_roles(key, owner=self.get_model())
            if token is None:
                raise exceptions.AuthenticationFailed("Invalid token.")
            if seconds:
                cache.set(token_cache_key(key), token, seconds)
        user = token.user
        if not user.is_active:
            raise exceptions.AuthenticationFailed("User inactive or deleted.")
        if token_expired(token=token):
            raise exceptions.AuthenticationFailed("Token expired; POST /api/auth/token/ gives a new one.")
        return user, token
