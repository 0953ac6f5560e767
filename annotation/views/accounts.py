"""Signing in (Django's page with the limited form; a locked-out attempt is answered 429; the person's
language put in their session), changing the password (which revokes the API tokens), and choosing the
language of the pages."""

from django.conf import settings
from django.contrib.auth import update_session_auth_hash
from django.contrib.auth import views as auth_views
from django.http import HttpResponseRedirect
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_POST

from annotation.forms import LanguageForm, LoginForm
from annotation.languages import SESSION_LANGUAGE
from annotation.selectors.people import person_language
from annotation.services.people import person_language_set
from annotation.services.tokens import user_password_set


class LoginView(auth_views.LoginView):
    authentication_form = LoginForm

    def form_invalid(self, form):
        response = super().form_invalid(form)
        if form.has_error("__all__", code="login_limited"):
            response.status_code = 429
        return response

    def form_valid(self, form):
        response = super().form_valid(form)
        language = person_language(user=form.get_user())
        if language:
            self.request.session[SESSION_LANGUAGE] = language
        return response


class PasswordChangeView(auth_views.PasswordChangeView):
    def form_valid(self, form):
        user_password_set(user=form.user, password=form.cleaned_data["new_password1"])
        update_session_auth_hash(self.request, form.user)  # this session stays signed in
        return HttpResponseRedirect(self.get_success_url())


@require_POST
def language_set(request):
    """The switcher on every page: the language goes in the cookie (kept after signing out) and, for a
    signed-in person, on their profile and in their session; then back to the page it was chosen on."""
    form = LanguageForm(request.POST)
    back = request.POST.get("next", "")
    if not url_has_allowed_host_and_scheme(back, allowed_hosts={request.get_host()}, require_https=False):
        back = "/"
    response = HttpResponseRedirect(back)
    if not form.is_valid():
        return response
    language = form.cleaned_data["language"]
    if request.user.is_authenticated:
        person_language_set(user=request.user, language=language)
        request.session[SESSION_LANGUAGE] = language
    response.set_cookie(
        settings.LANGUAGE_COOKIE_NAME,
        language,
        max_age=settings.LANGUAGE_COOKIE_AGE,
        path=settings.LANGUAGE_COOKIE_PATH,
        domain=settings.LANGUAGE_COOKIE_DOMAIN,
        secure=settings.LANGUAGE_COOKIE_SECURE,
        httponly=settings.LANGUAGE_COOKIE_HTTPONLY,
        samesite=settings.LANGUAGE_COOKIE_SAMESITE,
    )
    return response
