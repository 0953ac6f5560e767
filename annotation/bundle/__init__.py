"""Parsing of campaign bundles, TREC runs and judgment files into plain data.

Nothing here touches the database: a file is read and checked whole, so that an import either has every
problem located (file, line, field) before anything is written, or writes everything.
"""

from annotation.bundle.campaign import (
    CampaignBundle,
    DocumentRow,
    ModelRow,
    QueryRow,
    parse_bundle,
    parse_campaign_change,
)
from annotation.bundle.judgments import JudgmentRow, PreferenceRow, parse_judgment_lines
from annotation.bundle.reading import load_json
from annotation.bundle.runs import load_run, ranking_rows, runs_check

__all__ = [
    "CampaignBundle",
    "DocumentRow",
    "JudgmentRow",
    "ModelRow",
    "PreferenceRow",
    "QueryRow",
    "load_json",
    "load_run",
    "parse_bundle",
    "parse_campaign_change",
    "parse_judgment_lines",
    "ranking_rows",
    "runs_check",
]
