"""The embedded AWS: moto's server in this process, with the few changes that make it behave like
AWS where a stack depends on it (every change declared in compat/patches.py, its code in
services/<service>/).

- Lambda code runs for real: moto's `LambdaFunction.invoke` (used by the Invoke API and by
  CloudFormation custom resources) is routed to the local Lambda host.
- moto's own SQS -> Lambda wiring is switched off: it would receive messages inside the
  producer's SendMessage call and bump receive counts without running anything. The local host
  polls mappings the way the Lambda service does.
- Conditional writes are atomic, as DynamoDB guarantees (moto checks and stores in two steps),
  and a received SQS message goes to one consumer only (moto's receive is not thread-safe).
- IAM enforcement: moto matches policy resources only for a few services. For DynamoDB and
  CloudWatch Logs it is told the resource ARN of each request, so a policy scoped to one table
  or one log group is enforced as on AWS.
- A custom resource's response URL points at this server under `localhost`, and answering it
  needs no signature (on AWS it is a pre-signed S3 URL).
- It answers only this machine's SDKs and CLIs, never another site's web page, and the moto API
  is off (`server/guard.py`). IAM enforcement is on before it listens.
- Speed, with the same answers: HTTP keep-alive (werkzeug closes every connection), work moto
  repeats per request cached (module list, handler names, parsed IAM policies, name
  conversion), no queue scans on SendMessage, one scan per DeleteMessageBatch, and the
  DynamoDB write lock held for the write itself only. See `bench/profile_pipeline.py`.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

from embedded_aws.credentials import ACCOUNT_ID, ROLE_CREDENTIALS_SECONDS, Credentials
from embedded_aws.server.guard import LoopbackOnly
from embedded_aws.services.awslambda.invoke import FunctionRunner

ADMIN_USER = "local-admin"
_ALLOW_ALL = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "*", "Resource": "*"}]}


class EmbeddedAWS:
    """moto's threaded server on localhost:<port>, patched, with an admin user for callers."""

    def __init__(
        self,
        port: int,
        region: str = "us-east-1",
        faults_file: Path | None = None,
        state_dir: Path | None = None,
    ) -> None:
        from embedded_aws.services.cloudwatch.service import LocalCloudWatch

        self.port = port
        self.region = region
        self.faults_file = faults_file  # see embedded_aws/faults.py; None: no fault injection
        self.state_dir = state_dir  # where LOCAL_PROFILE's dumps go (embedded_aws/profiling.py)
        self.cloudwatch = LocalCloudWatch()  # its thread runs from cloudwatch.start()
        self.endpoint = f"http://localhost:{port}"
        self._server: Any = None
        self.admin: Credentials | None = None

    def start(self, host: FunctionRunner) -> None:
        """Patch moto (IAM enforcement is one of the patches), create the admin user, then listen:
        no request is ever served without a signature and a policy that allows it."""
        from moto.moto_server import werkzeug_app
        from werkzeug.serving import make_server

        from embedded_aws.compat.patches import REGISTRY, Context
        from embedded_aws.server.keep_alive import keep_alive_handler

        REGISTRY.apply(
            Context(
                port=self.port,
                host=host,
                cloudwatch=self.cloudwatch,
                faults_file=self.faults_file,
                state_dir=self.state_dir,
            )
        )
        self.admin = self._create_admin()
        from embedded_aws import profiling

        moto_app = werkzeug_app.DomainDispatcherApplication(werkzeug_app.create_backend_app)
        app = LoopbackOnly(profiling.CountedRequests(moto_app) if profiling.ENABLED else moto_app, self.port)
        self._server = make_server(
            "127.0.0.1", self.port, app, threaded=True, request_handler=keep_alive_handler()
        )
        # shutdown() waits for the serve loop's next poll: 0.1 s, not werkzeug's 0.5, so a stop
        # (every test run ends with one) does not wait out a quarter of a second on average.
        threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.1}, name="embedded-aws", daemon=True
        ).start()

    def stop(self) -> None:
        self.cloudwatch.stop()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def client(self, service: str, credentials: Credentials | None = None) -> Any:
        import boto3

        creds = credentials or self.admin
        assert creds is not None  # noqa: S101  the admin user exists once the server has started; narrows the type
        # boto3-stubs types client() per literal service name; this one is any name.
        return boto3.client(  # type: ignore[call-overload]
            service, region_name=self.region, endpoint_url=self.endpoint, **creds.as_client_kwargs()
        )

    def _create_admin(self) -> Credentials:
        """The user whose keys `make up` prints, made in moto's IAM directly (before the server
        listens, so there is no unauthenticated window)."""
        from moto.iam.models import iam_backends

        iam = iam_backends[ACCOUNT_ID]["aws"]
        iam.create_user(self.region, ADMIN_USER)
        iam.put_user_policy(ADMIN_USER, "allow-all", json.dumps(_ALLOW_ALL))
        key = iam.create_access_key(ADMIN_USER)
        return Credentials(key.access_key_id, key.secret_access_key)

    @staticmethod
    def lambda_function(function_arn: str) -> Any:
        """The stored function (moto's LambdaFunction) an ARN names, for the Lambda host."""
        from moto.awslambda.models import lambda_backends

        region, account = function_arn.split(":")[3:5]
        return lambda_backends[account][region].get_function(function_arn)

    def role_credentials(self, role_arn: str, session_name: str) -> Credentials:
        """What the Lambda service gets for a function's role. Asked of moto's STS backend
        directly: the role trusts lambda.amazonaws.com, which no local caller can sign as."""
        from moto.sts.models import sts_backends

        account = role_arn.split(":")[4]
        role = sts_backends[account]["aws"].assume_role(
            region_name=self.region,
            role_session_name=session_name[:64],
            role_arn=role_arn,
            policy="",
            duration=ROLE_CREDENTIALS_SECONDS,
            external_id="",
        )
        return Credentials(role.access_key_id, role.secret_access_key, role.session_token)
