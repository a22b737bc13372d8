"""The local Lambda host: sandboxes running function code in the declared runtime, its logs, and event source mappings."""
