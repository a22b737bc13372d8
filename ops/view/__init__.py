"""The live view: a local web page over `ops.snapshot`, and its HTTP server."""
