"""The compatibility layer between the embedded AWS and the moto it patches: the registry of
patches (registry.py), the declared list in the order it is applied (patches.py), and the speed
patches that belong to no one service (request_overhead.py). `python -m embedded_aws.compat`
lists every patch and checks the installed moto against them."""
