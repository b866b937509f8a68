"""HTTP dates as Netlayer reads them (docs/documents.md "HTTP dates"): the one strict
reader of RFC 9110 section 5.6.7 serves Retry-After as it serves the response cache's
Expires (whose cases are rows of Tests/cache/rfc9111.json)."""

from __future__ import annotations

import time
import uuid
from email.utils import formatdate

import pytest

import netlayer


def _retry_after_delay(client: netlayer.Client, value: str) -> float:
    """Seconds a GET waited between a 503 with `Retry-After: value` and its retry."""
    key = "dates-" + uuid.uuid4().hex[:8]
    started = time.monotonic()
    response = client.get("flaky/" + key, params={"fails": 1, "retry_after": value},
                          retry={"max_attempts": 2, "backoff": 0.05, "max_backoff": 5})
    assert response.value == {"key": key, "hits": 2} and response.attempts == 2
    return time.monotonic() - started


@pytest.mark.parametrize("form", ["imf-fixdate", "rfc850", "asctime"])
def test_retry_after_waits_until_an_http_date_in_each_form(client: netlayer.Client, form: str) -> None:
    at = time.time() + 3
    when = time.gmtime(at)
    value = {"imf-fixdate": formatdate(at, usegmt=True),
             "rfc850": time.strftime("%A, %d-%b-%y %H:%M:%S GMT", when),
             "asctime": time.strftime("%a %b ", when) + "%2d" % when.tm_mday + time.strftime(" %H:%M:%S %Y", when)}[form]
    assert _retry_after_delay(client, value) >= 1.5, value


@pytest.mark.parametrize("value", [
    "Fri, 01 Jan 38 00:00:00 GMT",      # two-digit year in an IMF-fixdate
    "Fri 01 Jan 2038 00:00:00 GMT",     # missing comma
    "Fri, 01-Jan-2038 00:00:00 GMT",    # dashes
    "Fri, 01 Jan 2038 1:00:00 GMT",     # one-digit hour
    "Fri, 01 Jan 2038 00:00:00 +0000",  # another zone
])
def test_retry_after_that_is_not_an_http_date_is_ignored(client: netlayer.Client, value: str) -> None:
    # A lenient reader takes these for a date years ahead and waits maxBackoff (5 s);
    # ignored, the retry waits the backoff (at most 0.05 s).
    assert _retry_after_delay(client, value) < 2, value


@pytest.mark.parametrize("value", ["3.5", "+3", "0x4", "4e0"])
def test_retry_after_seconds_are_digits_only(client: netlayer.Client, value: str) -> None:
    # delay-seconds is 1*DIGIT (RFC 9110 section 10.2.3), as urllib3 reads it: a reader
    # of any number waits 3 to 4 s for these; ignored, the retry waits the backoff.
    assert _retry_after_delay(client, value) < 2, value
