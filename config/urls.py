from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path, reverse_lazy

from annotation.password_links import password_link_tokens
from annotation.views.accounts import LoginView, PasswordChangeView

urlpatterns = [
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
    path("admin/", admin.site.urls),
    path("api/", include("annotation.api.urls")),
    path("api/", include("metrics.api.urls")),
    path("metrics/", include("metrics.urls")),
    path("", include("annotation.urls")),
]
