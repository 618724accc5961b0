"""The one HTTP client of sdd, for providers and connectors: a request goes through a
`Transport` (the real one on the standard library, `transport.StdlibTransport`; a test's double
records what it is sent), through the proxy the environment names (`proxy`), with the system's
trust store. Each caller maps statuses and failures to its own errors and words.

Why not httpx: `http.client` keeps a connection open across calls and gzip is one
`gzip.decompress`, so a dependency (and its ~65 ms import) buys nothing here. Nothing of it is
imported by `sdd --help`, `sdd role list`, a git hook or `sdd guard`: the HTTP modules of the
standard library are imported on the first request."""
