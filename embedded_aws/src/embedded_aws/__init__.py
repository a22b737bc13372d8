"""embedded-aws: moto's server made to behave like AWS where a serverless stack depends on it,
with a local Lambda host that runs function code for real. The public surface:

- `EmbeddedAWS(port, region, faults_file=None)`: `start(host)` applies every moto patch (the
  registry, `embedded_aws.compat`), turns IAM enforcement on and listens on localhost;
  `stop()`; `client(service)`; `role_credentials(role_arn, session)`; `cloudwatch`.
- `LambdaHost(...)`: runs functions in sandboxes and polls SQS event source mappings.
- `Credentials`, `ACCOUNT_ID`.
- Faults: `FAULTS_FILE`, `add_fault`, `add_latency`, `clear_faults`, `read_faults` (DynamoDB errors
  and latency injected from another process).
- `IN_FLIGHT_TAG`: the queue tag that lowers an SQS queue's in-flight cap, so a benchmark reaches
  the cap with a few thousand messages.
- `download_debs(packages, work, suite)`: a Debian release's packages fetched without root, as the
  Lambda host fetches runtimes (the local driver installs the AWS CLI with it).

Everything else is internal. Nothing here imports the stack or its operations tools.
"""

from __future__ import annotations

from typing import Any

_PUBLIC = {
    "EmbeddedAWS": "embedded_aws.server.emulator",
    "LambdaHost": "embedded_aws.lambda_host.host",
    "Credentials": "embedded_aws.credentials",
    "ACCOUNT_ID": "embedded_aws.credentials",
    "FAULTS_FILE": "embedded_aws.faults",
    "add_fault": "embedded_aws.faults",
    "add_latency": "embedded_aws.faults",
    "clear_faults": "embedded_aws.faults",
    "read_faults": "embedded_aws.faults",
    "IN_FLIGHT_TAG": "embedded_aws.services.sqs.limits",
    "download_debs": "embedded_aws.lambda_host.runtimes",
}
__all__ = sorted(_PUBLIC)  # noqa: PLE0605 - derived from the one table of lazy names above


def __getattr__(name: str) -> Any:
    """Imported on first use: `import embedded_aws` must not import moto (it reads settings from
    the environment when first imported)."""
    if name not in _PUBLIC:
        raise AttributeError(f"module 'embedded_aws' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(_PUBLIC[name]), name)
