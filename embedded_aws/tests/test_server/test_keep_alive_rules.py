"""When the embedded AWS's server keeps a connection open (server/keep_alive.py), without moto
or a server: which request bodies can be delimited, and which `Connection: close` is dropped."""

from __future__ import annotations

import pytest

from embedded_aws.server.keep_alive import delimited_length, keeps_connection


@pytest.mark.parametrize(
    ("environ", "length"),
    [
        ({"CONTENT_LENGTH": "12"}, 12),
        ({"CONTENT_LENGTH": ""}, 0),
        ({}, 0),
        ({"CONTENT_LENGTH": "-1"}, None),
        ({"CONTENT_LENGTH": "twelve"}, None),
        ({"CONTENT_LENGTH": "12", "wsgi.input_terminated": True}, None),
    ],
)
def test_a_body_is_delimited_by_a_valid_content_length_only(environ, length):
    """A chunked body (werkzeug terminates it itself) or a Content-Length that is no length
    cannot be delimited, so its connection is not kept; no length at all is an empty body."""
    assert delimited_length(environ) == length


def test_werkzeugs_own_close_is_dropped_on_a_delimited_body():
    """werkzeug adds `Connection: close` to every response: alone, it is dropped."""
    assert keeps_connection(1, body_delimited=True, client_closes=False)


@pytest.mark.parametrize(
    ("closes", "body_delimited", "client_closes"),
    [(2, True, False), (1, False, False), (1, True, True)],
)
def test_any_other_close_is_honoured(closes, body_delimited, client_closes):
    """A second close (the application's), an undelimited body or a client that asked for close
    ends the connection."""
    assert not keeps_connection(closes, body_delimited, client_closes)
