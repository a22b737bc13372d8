"""The embedded AWS's server: moto's WSGI application behind a loopback-only front door."""
