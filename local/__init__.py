"""Run the stack without AWS: an embedded AWS (moto's server) and a local Lambda host."""
