"""The tokens of set-password links: Django's password-reset token, which dies when the password changes
(the link was used, or a new link reset it) or PASSWORD_RESET_TIMEOUT runs out, with the person's link
generation hashed in too, which every new link and a deactivation move on (`PasswordLink`)."""

from django.contrib.auth.tokens import PasswordResetTokenGenerator

from annotation.models import PasswordLink


class PasswordLinkTokenGenerator(PasswordResetTokenGenerator):
    def _make_hash_value(self, user, timestamp: int) -> str:
        generations = PasswordLink.objects.filter(user_id=user.pk).values_list("generation", flat=True)
        return f"{super()._make_hash_value(user, timestamp)}:{generations.first() or 0}"


password_link_tokens = PasswordLinkTokenGenerator()
