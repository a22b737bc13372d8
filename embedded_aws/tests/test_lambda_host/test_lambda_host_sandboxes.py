"""The local Lambda host's sandbox pool without processes or an emulator (a fake Sandbox, a fake
clock, a short credentials lifetime): role credentials are fetched again well before they
expire, a sandbox is retired before its credentials could expire during an invocation, a new
code or configuration retires the old one's sandboxes, and reserved concurrency throttles."""

from __future__ import annotations

import io
import zipfile

import pytest

from embedded_aws.credentials import Credentials
from embedded_aws.lambda_host import host as lambda_host
from embedded_aws.lambda_host.host import LambdaHost, credentials_need_refresh, sandbox_may_serve
from embedded_aws.lambda_host.sandbox import FunctionSpec, Throttled
from embedded_aws.services.awslambda import metrics as lambda_metrics
from local.session import wait_for


def test_credential_rules():
    """Refresh once less than half the life remains; a sandbox serves only while its
    credentials outlive the function timeout plus the margin."""
    assert not credentials_need_refresh(expires_at=3600, now=1799, lifetime=3600)
    assert credentials_need_refresh(expires_at=3600, now=1801, lifetime=3600)
    assert sandbox_may_serve(expires_at=3600, now=2600, timeout=900, margin=60)
    assert not sandbox_may_serve(expires_at=3600, now=2700, timeout=900, margin=60)
    # Fresh credentials (at least half of 3,600 s left) always outlive the longest timeout.
    assert sandbox_may_serve(expires_at=1800, now=0, timeout=900, margin=60)


class FakeSandbox:
    def __init__(self, spec, code_dir, env):
        self.spec, self.env, self.closed = spec, env, False

    @property
    def alive(self) -> bool:
        return not self.closed

    def close(self) -> None:
        self.closed = True


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def code(text: str) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("app.py", text)
    return buffer.getvalue()


def spec(version: str = "1", timeout: int = 10) -> FunctionSpec:
    return FunctionSpec(
        name="fn",
        arn="arn:aws:lambda:us-east-1:123456789012:function:fn",
        handler="app.handler",
        timeout=timeout,
        memory=128,
        role_arn="arn:aws:iam::123456789012:role/r",
        environment=(),
        code_sha=version * 64,
        code_zip=code(f"# {version}"),
    )


@pytest.fixture
def host(tmp_path, monkeypatch):
    monkeypatch.setattr(lambda_host, "Sandbox", FakeSandbox)
    clock = Clock()
    issued: list[float] = []

    def role_credentials(role_arn: str, session_name: str) -> Credentials:
        issued.append(clock.now)
        return Credentials(f"AKIA{len(issued)}", "secret", "token")

    host = LambdaHost(
        endpoint="http://localhost:1",
        region="us-east-1",
        workdir=tmp_path,
        role_credentials=role_credentials,
        service_credentials=lambda: Credentials("a", "b"),
        stored_function=lambda arn: pytest.fail("no function is read from the emulator here"),
        credentials_lifetime=100,
        sandbox_margin=5,
        clock=clock,
    )
    # the tests read their clock and the credentials issued from the host they are given
    host.clock, host.issued = clock, issued  # type: ignore[attr-defined]
    return host


def test_role_credentials_are_refreshed_before_half_their_life_is_gone(host):
    """A 100 s lifetime: the same credentials until 50 s remain, new ones after."""
    first = host.credentials("arn:aws:iam::123456789012:role/r")
    host.clock.now = 49
    assert host.credentials("arn:aws:iam::123456789012:role/r") == first
    host.clock.now = 51
    assert host.credentials("arn:aws:iam::123456789012:role/r") != first
    assert host.issued == [0, 51]


def test_a_sandbox_is_retired_before_its_credentials_could_expire_mid_invocation(host):
    """Credentials issued at 0 expire at 100; timeout 10 + margin 5: the sandbox is reused at
    84 (16 s left) but not at 86 (14 s left), when a new one starts with new credentials."""
    first = host._acquire(spec())
    host._release(first)
    host.clock.now = 84
    assert host._acquire(spec()) is first
    host._release(first)
    host.clock.now = 86
    second = host._acquire(spec())
    assert second is not first
    assert second.env["AWS_ACCESS_KEY_ID"] == "AKIA2"  # 86 > 50: fetched again
    wait_for(lambda: first.closed, timeout=30, what="the retired sandbox to close")


def test_new_code_retires_the_old_sandboxes(host):
    """After an update (new code hash) the next invocation starts a new sandbox; the idle old
    one is closed at once and the busy old one when it is released."""
    idle_old, busy_old = host._acquire(spec("1")), host._acquire(spec("1"))
    host._release(idle_old)
    new = host._acquire(spec("2"))
    assert new not in (idle_old, busy_old)
    wait_for(lambda: idle_old.closed, timeout=30, what="the idle old sandbox to close")
    assert not busy_old.closed
    host._release(busy_old)
    wait_for(lambda: busy_old.closed, timeout=30, what="the busy old sandbox to close on release")
    host._release(new)
    assert host._acquire(spec("2")) is new


def test_reserved_concurrency_throttles_beyond_its_value(host, monkeypatch):
    """Reserved concurrency 0 throttles every invocation; 1 throttles a second one while the
    first runs. Each throttle is recorded for the Throttles metric."""
    throttles: list[str] = []
    monkeypatch.setattr(lambda_metrics, "record_throttle", lambda name, region: throttles.append(name))
    with pytest.raises(Throttled):
        host.invoke(spec(), {}, reserved_concurrency=0)

    def run(sandbox, request_id, event, defer_logs=False):
        with pytest.raises(Throttled):
            host.invoke(spec(), {}, reserved_concurrency=1)
        return "ran"

    monkeypatch.setattr(host, "_run", run)
    assert host.invoke(spec(), {}, reserved_concurrency=1) == "ran"
    assert throttles == ["fn", "fn"]
