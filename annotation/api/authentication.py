"""Token authentication that refuses tokens older than API_TOKEN_DAYS."""

from rest_framework import exceptions
from rest_framework.authentication import TokenAuthentication

from annotation.roles import role_names, roles_known
from annotation.services.tokens import token_expired


class ExpiringTokenAuthentication(TokenAuthentication):
    def authenticate_credentials(self, key):
        # As TokenAuthentication's, with the user's roles in the same statement.
        tokens = self.get_model().objects.select_related("user")
        token = tokens.annotate(role_names=role_names("user__groups__name")).filter(key=key).first()
        if token is None:
            raise exceptions.AuthenticationFailed("Invalid token.")
        user = token.user
        if not user.is_active:
            raise exceptions.AuthenticationFailed("User inactive or deleted.")
        roles_known(user, token.role_names)
        if token_expired(token=token):
            raise exceptions.AuthenticationFailed("Token expired; POST /api/auth/token/ gives a new one.")
        return user, token
