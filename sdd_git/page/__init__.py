"""Her page: the person's journey in a browser, served on loopback by `sdd page` (the [page] extra).

Imported only by `sdd page`: nothing else in sdd imports starlette, uvicorn or jinja2.
"""
