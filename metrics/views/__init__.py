"""Metrics pages, one module per page family."""
