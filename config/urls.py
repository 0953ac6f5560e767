from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.contrib.staticfiles import finders
from django.http import HttpResponse
from django.urls import include, path, reverse_lazy
from django.views.decorators.cache import cache_control
from django.views.i18n import JavaScriptCatalog

from annotation.password_links import password_link_tokens
from annotation.views.accounts import LoginView, PasswordChangeView, language_set

FAVICON = "judgeboard/favicon.svg"


@cache_control(max_age=86_400, public=True)
def favicon(request):
    """Browsers ask for /favicon.ico whatever the page links: the icon itself, an SVG (no 404 in the log)."""
    with open(finders.find(FAVICON), "rb") as icon:
        return HttpResponse(icon.read(), content_type="image/svg+xml")


# Tried in order: the API first, since its label and next task are what annotators ask most
# (`annotation/api/urls.py`).
urlpatterns = [
    path("api/", include("annotation.api.urls")),
    path("favicon.ico", favicon, name="favicon"),
    path("login/", LoginView.as_view(), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("password/", PasswordChangeView.as_view(), name="password_change"),
    path("password/done/", auth_views.PasswordChangeDoneView.as_view(), name="password_change_done"),
    path(
        "password/set/<uidb64>/<token>/",
        auth_views.PasswordResetConfirmView.as_view(
            success_url=reverse_lazy("password_set_done"), token_generator=password_link_tokens
        ),
        name="password_set",
    ),
    path("password/set/done/", auth_views.PasswordResetCompleteView.as_view(), name="password_set_done"),
    path("language/", language_set, name="language_set"),
    path("jsi18n/", JavaScriptCatalog.as_view(), name="javascript_catalog"),
    path("admin/", admin.site.urls),
    path("api/", include("metrics.api.urls")),
    path("metrics/", include("metrics.urls")),
    path("", include("annotation.urls")),
]
