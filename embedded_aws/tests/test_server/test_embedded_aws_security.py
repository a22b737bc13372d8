"""The embedded AWS against a web page in the user's browser and against unsigned local callers:
the moto API is off, a foreign Origin or Sec-Fetch-Site is refused, a rebound Host name is
refused, no CORS is granted; the AWS CLI, boto3 (by localhost and by 127.0.0.1) still work. After
every attack IAM enforcement is still on (an unknown key is denied) and the queue still exists."""

from __future__ import annotations

import http.client
import os
import subprocess

import boto3
import pytest
from botocore.exceptions import ClientError

from local import aws_cli

pytestmark = [pytest.mark.e2e]

QUEUE = "security-probe"


@pytest.fixture(scope="module")
def aws(emulator):
    emulator.client("sqs").create_queue(QueueName=QUEUE)
    return emulator


def send(aws, method: str, path: str, headers: dict, body: bytes | None = None):
    port = aws.require_state()["port"]
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        connection.request(method, path, body=body, headers={"Host": f"localhost:{port}", **headers})
        response = connection.getresponse()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()
    finally:
        connection.close()


def assert_state_unchanged(aws) -> None:
    """IAM enforcement is on (an unknown key is refused) and the queue is still there."""
    env = aws.aws_env()
    stranger = boto3.client(
        "sqs",
        endpoint_url=env["AWS_ENDPOINT_URL"],
        region_name=env["AWS_REGION"],
        aws_access_key_id="AKIAUNKNOWNKEY000000",
        aws_secret_access_key="x" * 40,
    )
    with pytest.raises(ClientError) as denied:
        stranger.list_queues()
    assert denied.value.response["ResponseMetadata"]["HTTPStatusCode"] == 403
    urls = aws.client("sqs").list_queues(QueueNamePrefix=QUEUE).get("QueueUrls", [])
    assert [url.rsplit("/", 1)[-1] for url in urls] == [QUEUE]


@pytest.mark.parametrize("path, body", [("/moto-api/reset-auth", b"1000000"), ("/moto-api/reset", b"")])
@pytest.mark.parametrize("how", ["foreign origin", "rebound host", "cross-site fetch", "local process"])
def test_moto_api_cannot_reset_the_emulator_or_its_iam(aws, path, body, how):
    """A cross-site POST (form or fetch), a DNS-rebound page, or any local process without the
    admin key: `reset-auth` (IAM enforcement off) and `reset` (wipe everything) are refused."""
    port = aws.require_state()["port"]
    headers = {
        "foreign origin": {"Origin": "https://evil.example"},
        "rebound host": {"Host": f"evil.example:{port}"},
        "cross-site fetch": {"Sec-Fetch-Site": "cross-site"},
        "local process": {},
    }[how]
    status, response_headers, answer = send(
        aws, "POST", path, {"Content-Type": "text/plain", **headers}, body
    )
    assert status in (403, 421), answer
    assert response_headers.get("connection") == "close"
    assert not any(name.startswith("access-control-") for name in response_headers)
    assert_state_unchanged(aws)


def test_cross_origin_reads_get_no_cors_and_no_data(aws):
    """moto's data dump, and a preflight for an AWS call, from another site: refused, with no
    Access-Control-Allow-* header that would let the page read an answer."""
    for method, path, headers in (
        ("GET", "/moto-api/data.json", {"Origin": "https://evil.example"}),
        ("GET", "/moto-api/data.json", {}),
        (
            "OPTIONS",
            "/",
            {
                "Origin": "https://evil.example",
                "Access-Control-Request-Method": "POST",
                "Access-Control-Request-Headers": "authorization,content-type",
            },
        ),
        ("GET", "/?Action=ListQueues", {"Origin": "null"}),
    ):
        status, response_headers, answer = send(aws, method, path, headers)
        assert status == 403, (path, answer)
        assert QUEUE.encode() not in answer
        assert not any(name.startswith("access-control-") for name in response_headers), response_headers
    assert_state_unchanged(aws)


def test_a_rebound_host_name_reaches_nothing(aws):
    """DNS rebinding: the page's own name (or the wrong port) as Host is answered 421, reads too."""
    port = aws.require_state()["port"]
    for host in (
        f"evil.example:{port}",
        "evil.example",
        f"localhost:{port + 1}",
        f"127.0.0.1.evil.example:{port}",
    ):
        status, _, answer = send(aws, "GET", "/?Action=ListQueues", {"Host": host})
        assert status == 421, (host, answer)
    assert_state_unchanged(aws)


def test_sdk_and_cli_clients_still_work(aws):
    """boto3 by localhost and by 127.0.0.1 (as the lab's worker calls it), and the AWS CLI."""
    env = aws.aws_env()
    for endpoint in (env["AWS_ENDPOINT_URL"], env["AWS_ENDPOINT_URL"].replace("localhost", "127.0.0.1")):
        client = boto3.client(
            "sqs",
            endpoint_url=endpoint,
            region_name=env["AWS_REGION"],
            aws_access_key_id=env["AWS_ACCESS_KEY_ID"],
            aws_secret_access_key=env["AWS_SECRET_ACCESS_KEY"],
        )
        assert any(url.endswith(f"/{QUEUE}") for url in client.list_queues()["QueueUrls"])
    cli = subprocess.run(
        [str(aws_cli.aws()), "sqs", "list-queues"],
        env={**{k: v for k, v in os.environ.items() if not k.startswith("AWS_")}, **env},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert cli.returncode == 0, cli.stderr
    assert f"/{QUEUE}" in cli.stdout


def test_the_admin_key_and_view_token_are_this_users_only(aws):
    """The state directory (admin key, the view's URL with its token) is private to its owner."""
    assert aws.state_dir.stat().st_mode & 0o777 == 0o700
    state_file = aws.state_dir / "emulator.json"
    assert state_file.stat().st_mode & 0o777 == 0o600
    assert "?token=" in aws.state["view_url"]


def test_a_connection_stays_open_between_requests(aws):
    """HTTP keep-alive (server/keep_alive.py): two requests with bodies share one connection and
    neither answer says `Connection: close` (werkzeug alone closes every connection)."""
    port = aws.require_state()["port"]
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    answers = []
    try:
        for _ in range(2):
            connection.request(
                "POST",
                "/",
                body=b"Action=ListQueues",
                headers={"Host": f"localhost:{port}", "Content-Type": "application/x-www-form-urlencoded"},
            )
            response = connection.getresponse()
            response.read()
            answers.append((response.getheader("Connection"), connection.sock))
    finally:
        connection.close()
    (first_header, first_socket), (second_header, second_socket) = answers
    assert (first_header, second_header) == (None, None)
    assert first_socket is not None and first_socket is second_socket
