from django.core.management.base import BaseCommand

from annotation.campaign_settings import settings_table_markdown


class Command(BaseCommand):
    help = "Print the campaign settings as the README's Markdown table (annotation/campaign_settings.py)."

    def handle(self, *args, **options):
        self.stdout.write(settings_table_markdown(), ending="")
