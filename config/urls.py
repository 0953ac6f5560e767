from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path

from annotation.views.accounts import LoginView, PasswordChangeView

urlpatterns = [
    path("login/", LoginView.as_view(), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("password/", PasswordChangeView.as_view(), name="password_change"),
    path("password/done/", auth_views.PasswordChangeDoneView.as_view(), name="password_change_done"),
    path("admin/", admin.site.urls),
    path("api/", include("annotation.api.urls")),
    path("api/", include("metrics.api.urls")),
    path("metrics/", include("metrics.urls")),
    path("", include("annotation.urls")),
]
