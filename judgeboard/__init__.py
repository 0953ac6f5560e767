"""The `judgeboard` command line and Python SDK: `evaluate` (TREC files to numbers, with no Django, no
database, no settings) and a client of the REST API for release pipelines. Installable with pip from the
repository (`pyproject.toml`); `python -m judgeboard` runs it as well."""
