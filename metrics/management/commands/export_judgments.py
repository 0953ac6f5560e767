import json

from django.core.management.base import BaseCommand

from annotation.errors import InputError
from annotation.management.cli import command_error
from annotation.selectors.campaigns import campaign_get
from annotation.selectors.labels import campaign_labels_export
from metrics.selectors.aggregation import campaign_aggregated_labels
from metrics.selectors.diversity import intent_qrels_rows
from metrics.selectors.impressions import behaviour_qrels_rows
from trec.files import QRELS_INTEGER, write_qrels
from trec.intents import write_intent_qrels


class Command(BaseCommand):
    help = (
        "Write a campaign's raw labels as JSONL, its aggregated labels as TREC qrels, its labels from "
        "behaviour (the interaction logs graded by the campaign's behaviour_grades) as TREC qrels, or its "
        "aggregated intent judgments as ndeval's qrels (topic intent docno judgment)."
    )

    def add_arguments(self, parser):
        parser.add_argument("campaign", help="the campaign's id or name")
        parser.add_argument(
            "--format", choices=["jsonl", "qrels", "behaviour-qrels", "intent-qrels"], default="jsonl"
        )
        parser.add_argument(
            "--integer",
            choices=QRELS_INTEGER,
            help="qrels for trec_eval, which reads labels as integers: round (halves up) or floor the "
            "aggregated labels (default: exact values, as `evaluate` reads them)",
        )
        parser.add_argument("-o", "--output", help="a file to write (default: standard output)")

    def handle(self, *args, campaign, format, output, integer, **options):
        try:
            target = campaign_get(identifier=campaign)
        except InputError as exc:
            raise command_error(exc) from None
        out = open(output, "w", encoding="utf-8") if output else self.stdout  # noqa: SIM115
        try:
            if format == "jsonl":
                for row in campaign_labels_export(campaign=target):
                    out.write(json.dumps(row, ensure_ascii=False) + "\n")
            elif format == "qrels":
                labels = campaign_aggregated_labels(campaign=target)
                write_qrels(out, labels.query_ids, labels.document_ids, labels.grades, integer=integer)
            elif format == "intent-qrels":
                write_intent_qrels(out, intent_qrels_rows(campaign=target))
            else:
                write_qrels(out, *behaviour_qrels_rows(campaign=target), integer=integer)
        finally:
            if output:
                out.close()
