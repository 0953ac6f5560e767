from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from annotation.services.demo import DEMO_PASSWORD, DEMO_USERS, DEMO_ZH_NAME, DEMO_ZH_USERS, demo_load


class Command(BaseCommand):
    help = "Load the demo campaign and the demo logins (development only; idempotent)."

    def handle(self, *args, **options):
        if not settings.DEBUG:
            raise CommandError(
                "load_demo creates users with the password 'demo'; it runs only with DEBUG on."
            )
        campaign, created = demo_load()
        state = "loaded" if created else "already loaded"
        self.stdout.write(f"Demo campaign {campaign.name!r} (id {campaign.pk}) {state}, with its week 2,")
        self.stdout.write("which starts from week 1's labels (the same judging standard).")
        self.stdout.write(f"Demo logins (password {DEMO_PASSWORD!r}): {', '.join(DEMO_USERS)}")
        self.stdout.write(
            f"The Chinese campaign {DEMO_ZH_NAME!r}, whose team sees the pages in Chinese: "
            f"{', '.join(DEMO_ZH_USERS)} (and manager)"
        )
