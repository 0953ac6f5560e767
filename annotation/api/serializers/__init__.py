"""Parsing requests and shaping responses, one module per concern; no rules here (they live in the
services)."""
