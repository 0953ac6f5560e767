from django.conf import settings
from django.core.management.base import CommandError
from django.utils.translation import gettext as _

from annotation.management.cli import SpokenCommand
from annotation.services.demo import DEMO_PASSWORD, DEMO_USERS, DEMO_ZH_NAME, DEMO_ZH_USERS, demo_load


class Command(SpokenCommand):
    help = "Load the demo campaign and the demo logins (development only; idempotent)."

    def handle(self, *args, **options):
        if not settings.DEBUG:
            raise CommandError(
                _("load_demo creates users with the password 'demo'; it runs only with DEBUG on.")
            )
        campaign, created = demo_load()
        if created:
            loaded = _("Demo campaign %(name)s (id %(id)d) loaded, with its week 2,")
        else:
            loaded = _("Demo campaign %(name)s (id %(id)d) already loaded, with its week 2,")
        self.stdout.write(loaded % {"name": repr(campaign.name), "id": campaign.pk})
        self.stdout.write(_("which starts from week 1's labels (the same judging standard)."))
        logins = _("Demo logins (password %(password)s): %(users)s")
        self.stdout.write(logins % {"password": repr(DEMO_PASSWORD), "users": ", ".join(DEMO_USERS)})
        chinese = _(
            "The Chinese campaign %(name)s, whose team sees the pages in Chinese: %(users)s (and manager)"
        )
        self.stdout.write(chinese % {"name": repr(DEMO_ZH_NAME), "users": ", ".join(DEMO_ZH_USERS)})
