"""Web pages of the annotation app, one module a concern."""
