import gzip
import json
import sys

from django.core.management.base import BaseCommand

from annotation.errors import InputError
from annotation.management.cli import command_error
from annotation.selectors.campaigns import campaign_get
from metrics.selectors.impressions import simulated_interactions


class Command(BaseCommand):
    help = (
        "Write a simulated interaction log of a campaign (users under the position-based click model, "
        "relevance from its human labels): to try the Behaviour page, never to decide."
    )

    def add_arguments(self, parser):
        parser.add_argument("campaign", help="the campaign's id or name")
        parser.add_argument("--lists", type=int, default=5000, help="result lists shown (default 5000)")
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument("-o", "--output", help="the file (gzipped when it ends in .gz); default: stdout")

    def handle(self, *args, campaign, lists, seed, output, **options):
        try:
            target = campaign_get(identifier=campaign)
        except InputError as exc:
            raise command_error(exc) from None
        rows = simulated_interactions(campaign=target, n_lists=lists, seed=seed)
        lines = (
            json.dumps({k: v for k, v in row.items() if v is not None}, separators=(",", ":")) + "\n"
            for row in rows
        )
        if output is None:
            sys.stdout.writelines(lines)
            return
        opener = gzip.open if output.endswith(".gz") else open
        with opener(output, "wt", encoding="utf-8") as file:
            file.writelines(lines)
