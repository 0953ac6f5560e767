"""Reads of the annotation domain, by concern: a few queries each, returning rows or plain data."""
