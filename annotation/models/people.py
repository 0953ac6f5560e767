"""What the app keeps about a person beside Django's user: their set-password links' generation and the
language they chose for the pages."""

from django.conf import settings
from django.db import models


class PasswordLink(models.Model):
    """Every set-password link hashes the person's `generation` (`annotation.password_links`); a new link
    and a deactivation move it on, so every link made before stops working. No row: generation 0."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, primary_key=True, related_name="+"
    )
    generation = models.PositiveIntegerField(default=0)

    def __str__(self):
        return f"{self.user_id}: {self.generation}"


class Profile(models.Model):
    """A person's own choices. `language` is one of `settings.LANGUAGES`' codes, or empty to follow the
    browser; it is put in their session at sign-in and when they change it (`config.middleware`)."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, primary_key=True, related_name="+"
    )
    language = models.CharField(max_length=16, blank=True, default="")

    def __str__(self):
        return f"{self.user_id}: {self.language or '-'}"
