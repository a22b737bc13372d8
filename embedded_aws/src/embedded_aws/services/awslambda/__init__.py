"""Lambda: the Invoke API runs code in the local Lambda host, event source mappings refused where AWS refuses them, AWS/Lambda metrics."""
