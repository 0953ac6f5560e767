"""API views of the annotation app, one module a concern."""
