"""What both apps stand on and neither owns: reading hand-written SQL rows into model instances (`rows`),
writing many rows at once (`bulk`), reading a queryset's rows as NumPy columns (`columns`), the replica
router (`routers`), the Redis cache with one client per process (`cache`), the process's memory behaviour
for long imports (`memory`), foreign keys checked once a statement on PostgreSQL (`statement_keys`), and the
only place a thread is started (`threads`). It imports neither app."""
