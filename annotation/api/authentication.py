"""Token authentication that refuses tokens older than API_TOKEN_DAYS."""

from rest_framework import exceptions
from rest_framework.authentication import TokenAuthentication

from annotation.services.tokens import token_expired


class ExpiringTokenAuthentication(TokenAuthentication):
    def authenticate_credentials(self, key):
        user, token = super().authenticate_credentials(key)
        if token_expired(token=token):
            raise exceptions.AuthenticationFailed("Token expired; POST /api/auth/token/ gives a new one.")
        return user, token
