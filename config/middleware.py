"""Response headers every page and API answer gets beside Django's own (CSP, HSTS, nosniff), and the
language each request is answered in."""

from django.middleware.locale import LocaleMiddleware
from django.utils import translation
from django.utils.cache import add_never_cache_headers

from annotation.languages import SESSION_LANGUAGE

# No page uses these browser features; a script injected despite the CSP cannot either. Only features
# Chromium knows: one it does not (`bluetooth`) is reported as an error on every page.
PERMISSIONS_POLICY = ", ".join(
    f"{feature}=()"
    for feature in (
        "camera",
        "microphone",
        "geolocation",
        "payment",
        "usb",
        "serial",
        "display-capture",
    )
)


class SecurityHeadersMiddleware:
    """Permissions-Policy on everything; `Cache-Control: no-store` on what a signed-in user sees (pages,
    exports, reports, API answers), so that no shared or browser cache keeps it after sign-out."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        response.headers.setdefault("Permissions-Policy", PERMISSIONS_POLICY)
        user = getattr(request, "user", None)  # DRF sets it for token requests too
        if user is not None and user.is_authenticated:
            add_never_cache_headers(response)
        return response


class LanguageMiddleware(LocaleMiddleware):
    """Django's LocaleMiddleware (the language cookie, then Accept-Language), with the signed-in person's
    own choice first: it is in their session, so no request asks the database for it."""

    def process_request(self, request):
        chosen = request.session.get(SESSION_LANGUAGE) if hasattr(request, "session") else None
        try:
            language = translation.get_supported_language_variant(chosen) if chosen else None
        except LookupError:  # a language no longer offered
            language = None
        if language is None:
            super().process_request(request)
            return
        translation.activate(language)
        request.LANGUAGE_CODE = translation.get_language()
