"""Signing in (Django's page with the limited form; a locked-out attempt is answered 429) and changing the
password (which revokes the API tokens)."""

from django.contrib.auth import update_session_auth_hash
from django.contrib.auth import views as auth_views
from django.http import HttpResponseRedirect

from annotation.forms import LoginForm
from annotation.services.tokens import user_password_set


class LoginView(auth_views.LoginView):
    authentication_form = LoginForm

    def form_invalid(self, form):
        response = super().form_invalid(form)
        if form.has_error("__all__", code="login_limited"):
            response.status_code = 429
        return response


class PasswordChangeView(auth_views.PasswordChangeView):
    def form_valid(self, form):
        user_password_set(user=form.user, password=form.cleaned_data["new_password1"])
        update_session_auth_hash(self.request, form.user)  # this session stays signed in
        return HttpResponseRedirect(self.get_success_url())
