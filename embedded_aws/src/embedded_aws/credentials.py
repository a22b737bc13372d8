"""AWS credentials as the local run hands them out: the admin user's keys, a function role's."""

from __future__ import annotations

from dataclasses import dataclass

ACCOUNT_ID = "123456789012"  # moto's default account: every local resource lives in it
# How long the role credentials the local Lambda service gets from STS last (AssumeRole's
# DurationSeconds). The emulator never checks expiry; the Lambda host plans as if it did.
ROLE_CREDENTIALS_SECONDS = 3600


@dataclass(frozen=True)
class Credentials:
    access_key_id: str
    secret_access_key: str
    session_token: str | None = None

    def as_env(self) -> dict[str, str]:
        env = {"AWS_ACCESS_KEY_ID": self.access_key_id, "AWS_SECRET_ACCESS_KEY": self.secret_access_key}
        if self.session_token:
            env["AWS_SESSION_TOKEN"] = self.session_token
        return env

    def as_client_kwargs(self) -> dict[str, str]:
        kwargs = {"aws_access_key_id": self.access_key_id, "aws_secret_access_key": self.secret_access_key}
        if self.session_token:
            kwargs["aws_session_token"] = self.session_token
        return kwargs
