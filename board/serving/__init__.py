"""How board is served (SPEC 12), apart from what it does: the middleware, the request
and job log lines, the metrics and their folder, the health probes, reading the
environment, the deployment checks, static file names, the browser-origin rule and the
PostgreSQL backend. Nothing here is imported at package import, so wsgi.py can name the
metrics folder before prometheus-client loads."""
