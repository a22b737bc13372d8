"""An operator of a deployed test stack: a user holding nothing but the stack's
`<prefix>-operator` managed policy, running `python -m ops` as a person would."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass

from local.session import ROOT, LocalSession


@dataclass(frozen=True)
class Operator:
    prefix: str
    env: dict[str, str]  # the process environment `ops` runs with: endpoint, region, the user's keys

    @classmethod
    def create(cls, session: LocalSession) -> Operator:
        outputs, endpoint = session.outputs(), session.aws_env()
        user = f"{session.prefix}-operator-user"
        iam = session.client("iam")
        iam.create_user(UserName=user)
        iam.attach_user_policy(UserName=user, PolicyArn=outputs["OperatorPolicyArn"])
        key = iam.create_access_key(UserName=user)["AccessKey"]
        return cls(
            session.prefix,
            {
                **{name: value for name, value in os.environ.items() if not name.startswith("AWS_")},
                "AWS_ENDPOINT_URL": endpoint["AWS_ENDPOINT_URL"],
                "AWS_REGION": endpoint["AWS_REGION"],
                "AWS_ACCESS_KEY_ID": key["AccessKeyId"],
                "AWS_SECRET_ACCESS_KEY": key["SecretAccessKey"],
            },
        )

    def run(self, *args: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "-m", "ops", *args, "--prefix", self.prefix],
            cwd=ROOT,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=300,
        )

    def json(self, *args: str):
        result = self.run(*args, "--json")
        assert result.returncode == 0, result.stderr
        return json.loads(result.stdout)


def order(order_id: str, quantity: int) -> str:
    return json.dumps({"id": order_id, "quantity": quantity})
