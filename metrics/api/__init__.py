"""The metrics API: results, reports and exports of a campaign."""
