"""Results kept in the shared cache (Redis, or the database's cache table: every worker finds them), each
under the digest of the inputs it was computed from (`plumbing.digests.inputs_digest` of what the selector
read), so no write can leave one in place, and the digest of the code that computes them, so no deployment
reads another's. One result a slot (e.g. a campaign's launch report with its options): a new one takes the
place of the last."""

from collections.abc import Callable
from pathlib import Path
from typing import Any

from django.core.cache import cache

from annotation.models import Campaign
from plumbing.digests import sources_digest

KEPT_SECONDS = 7 * 24 * 3600
_ROOT = Path(__file__).resolve().parents[2]
_CODE = sources_digest(
    [
        _ROOT / "metrics" / "compute",
        _ROOT / "metrics" / "selectors",
        _ROOT / "annotation" / "campaign_settings.py",
        _ROOT / "trec",
        _ROOT / "plumbing" / "digests.py",
    ]
)[:16]


def kept_slot(name: str, campaign: Campaign, *options: object) -> str:
    return ":".join(map(str, (name, _CODE, campaign.pk, *options)))


def kept(slot: str, inputs: str) -> Any:
    """The result kept in `slot` when it was computed from `inputs`, else None."""
    found = cache.get(slot)
    return found[1] if found is not None and found[0] == inputs else None


def keep(slot: str, inputs: str, result: object) -> None:
    cache.set(slot, (inputs, result), KEPT_SECONDS)


def kept_or_computed[T](slot: str, inputs: str, compute: Callable[[], T]) -> T:
    """The result kept in `slot` for `inputs`, else `compute()`'s, kept there for the next request."""
    found = kept(slot, inputs)
    if found is None:
        found = compute()
        keep(slot, inputs, found)
    return found
