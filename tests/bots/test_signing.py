"""Standard Webhooks signatures: the spec's vector, agreement with the maintained package both
ways, key rotation, and refusals that are always a ``SignatureError`` (never a crash)."""

from __future__ import annotations

import base64
import time
from datetime import UTC, datetime

import pytest
from standardwebhooks import Webhook

from bots import signing
from bots.signing import SignatureError

# The example published with the Standard Webhooks reference libraries.
SPEC_SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
SPEC_ID = "msg_p5jXN8AQM9LWM0D4loKWxJek"
SPEC_TIMESTAMP = 1614265330
SPEC_BODY = b'{"test": 2432232314}'
SPEC_SIGNATURE = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="


def _headers(secrets: list[str], body: bytes, *, stamp: int | None = None) -> dict[str, str]:
    now = int(time.time()) if stamp is None else stamp
    return signing.headers_for(secrets, "msg_alice", now, body)


def test_it_reproduces_the_specs_published_signature() -> None:
    assert signing.sign(SPEC_SECRET, SPEC_ID, SPEC_TIMESTAMP, SPEC_BODY) == SPEC_SIGNATURE


def test_it_verifies_the_specs_published_signature_at_its_time() -> None:
    headers = {
        "webhook-id": SPEC_ID,
        "webhook-timestamp": str(SPEC_TIMESTAMP),
        "webhook-signature": SPEC_SIGNATURE,
    }
    signing.verify(SPEC_SECRET, headers, SPEC_BODY, now=SPEC_TIMESTAMP + 10)


@pytest.mark.parametrize("body", [b"{}", b'{"protocol":1,"type":"turn"}', '{"é":"✓"}'.encode()])
def test_the_package_accepts_what_we_sign(body: bytes) -> None:
    secret = signing.new_secret()
    Webhook(secret).verify(body, _headers([secret], body))


def test_we_accept_what_the_package_signs() -> None:
    secret = signing.new_secret()
    stamp = int(time.time())
    sig = Webhook(secret).sign("msg_bob", datetime.fromtimestamp(stamp, tz=UTC), "{}")
    headers = {"webhook-id": "msg_bob", "webhook-timestamp": str(stamp), "webhook-signature": sig}
    signing.verify(secret, headers, b"{}")


def test_new_secrets_are_whsec_and_decode_to_32_random_bytes() -> None:
    first, second = signing.new_secret(), signing.new_secret()
    assert first.startswith("whsec_") and first != second
    assert len(base64.b64decode(first.removeprefix("whsec_"))) == 32


def test_during_a_rotation_either_secret_verifies() -> None:
    old, new = signing.new_secret(), signing.new_secret()
    headers = _headers([new, old], b"{}")
    assert len(headers["webhook-signature"].split(" ")) == 2
    signing.verify(old, headers, b"{}")
    signing.verify(new, headers, b"{}")
    Webhook(old).verify(b"{}", headers)  # the package reads the space-separated list too


def test_it_rejects_a_signature_from_another_secret() -> None:
    headers = _headers([signing.new_secret()], b"{}")
    with pytest.raises(SignatureError, match="no webhook-signature entry"):
        signing.verify(signing.new_secret(), headers, b"{}")


def test_it_rejects_a_tampered_body() -> None:
    secret = signing.new_secret()
    headers = _headers([secret], b'{"move":1}')
    with pytest.raises(SignatureError):
        signing.verify(secret, headers, b'{"move":2}')


@pytest.mark.parametrize("offset", [-301, 301, -86400])
def test_it_rejects_timestamps_more_than_five_minutes_off(offset: int) -> None:
    secret = signing.new_secret()
    now = 1_800_000_000
    headers = _headers([secret], b"{}", stamp=now + offset)
    with pytest.raises(SignatureError, match="away from now"):
        signing.verify(secret, headers, b"{}", now=now)


@pytest.mark.parametrize("offset", [-300, 0, 300])
def test_it_accepts_timestamps_within_five_minutes(offset: int) -> None:
    secret = signing.new_secret()
    now = 1_800_000_000
    signing.verify(secret, _headers([secret], b"{}", stamp=now + offset), b"{}", now=now)


@pytest.mark.parametrize(
    "change",
    [
        {"webhook-id": ""},
        {"webhook-timestamp": ""},
        {"webhook-signature": ""},
        {"webhook-timestamp": "1e9"},
        {"webhook-timestamp": "nan"},
        {"webhook-timestamp": "-5"},
        {"webhook-timestamp": "٣٣٣"},  # digits, but not ASCII ones
        {"webhook-signature": "v1"},
        {"webhook-signature": "v1,not base64!"},
        {"webhook-signature": "v1a,abc v2,xyz"},
        {"webhook-signature": "v1," + "A" * 5000},
        {"webhook-id": "a" * 300},
    ],
)
def test_malformed_headers_are_a_signature_error_never_a_crash(change: dict[str, str]) -> None:
    secret = signing.new_secret()
    headers = {**_headers([secret], b"{}"), **change}
    with pytest.raises(SignatureError):
        signing.verify(secret, headers, b"{}")


def test_header_names_are_matched_without_regard_to_case() -> None:
    secret = signing.new_secret()
    headers = {name.upper(): value for name, value in _headers([secret], b"{}").items()}
    signing.verify(secret, headers, b"{}")


def test_a_body_that_is_not_utf8_is_refused_not_crashed_on() -> None:
    secret = signing.new_secret()
    headers = _headers([secret], b"{}")
    with pytest.raises(SignatureError):
        signing.verify(secret, headers, b"\xff\xfe")


def test_signing_needs_at_least_one_secret() -> None:
    with pytest.raises(ValueError):
        signing.signature_header([], "msg_x", 1, b"{}")
