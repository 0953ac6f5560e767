"""API: the token a client authenticates with."""

from drf_spectacular.utils import extend_schema, extend_schema_view
from rest_framework import exceptions
from rest_framework.permissions import AllowAny, IsAuthenticated
from rest_framework.response import Response
from rest_framework.throttling import ScopedRateThrottle
from rest_framework.views import APIView

from annotation.api.exceptions import BodyLimitMixin
from annotation.api.serializers.requests import TokenRequestSerializer, TokenSerializer
from annotation.services.logins import LoginLimited, user_authenticate
from annotation.services.tokens import token_get_or_create, tokens_revoke


@extend_schema_view(
    post=extend_schema(
        tags=["auth"],
        request=TokenRequestSerializer,
        responses={200: TokenSerializer},
        description=(
            "A token for `Authorization: Token <token>`: the same one until it is revoked or expires "
            "(`API_TOKEN_DAYS`). Throttled per client (setting `LOGIN_THROTTLE_RATE`); after "
            "`LOGIN_FAILURES_PER_ACCOUNT` failures for an account or `LOGIN_FAILURES_PER_ADDRESS` from an "
            "address, every attempt is 429 for `LOGIN_LOCKOUT_MINUTES`."
        ),
    ),
    delete=extend_schema(
        tags=["auth"],
        request=None,
        responses={204: None},
        description="Revokes the caller's token; the next `POST` gives a new one.",
    ),
)
class TokenView(BodyLimitMixin, APIView):
    throttle_classes = [ScopedRateThrottle]
    throttle_scope = "login"

    def get_authenticators(self):
        # Signing in takes no credentials but the password; revoking takes the token (or session).
        return [] if getattr(self.request, "method", None) == "POST" else super().get_authenticators()

    def get_permissions(self):
        return [AllowAny()] if getattr(self.request, "method", None) == "POST" else [IsAuthenticated()]

    def post(self, request, *args, **kwargs):
        credentials = TokenRequestSerializer(data=request.data)
        credentials.is_valid(raise_exception=True)
        try:
            user = user_authenticate(request=request, **credentials.validated_data)
        except LoginLimited as limited:
            raise exceptions.Throttled(detail=str(limited)) from None
        if user is None:
            raise exceptions.ValidationError(
                "Unable to log in with the provided credentials.", "authorization"
            )
        return Response({"token": token_get_or_create(user=user).key})

    def delete(self, request, *args, **kwargs):
        tokens_revoke(user=request.user)
        return Response(status=204)
