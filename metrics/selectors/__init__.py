"""Reads of the metrics app, by concern: each fetches in a few queries and calls metrics.compute."""
