from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.templatetags.static import static
from django.urls import include, path, reverse_lazy
from django.views.generic import RedirectView
from django.views.i18n import JavaScriptCatalog

from annotation.password_links import password_link_tokens
from annotation.views.accounts import LoginView, PasswordChangeView, language_set


class FaviconView(RedirectView):
    """Browsers ask for /favicon.ico whatever the page says: send them to the static icon (hashed name)."""

    permanent = False

    def get_redirect_url(self, *args, **kwargs):
        return static("judgeboard/favicon.svg")


urlpatterns = [
    path("favicon.ico", FaviconView.as_view(), name="favicon"),
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
    path("api/", include("annotation.api.urls")),
    path("api/", include("metrics.api.urls")),
    path("metrics/", include("metrics.urls")),
    path("", include("annotation.urls")),
]
