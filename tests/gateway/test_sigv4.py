"""SigV4's shortcuts on the hot path answer exactly what the long way does: the Authorization header read by one
pattern, a query's pairs encoded once and then found by the pair, plain paths taken as sent, request times
compared in seconds."""

from __future__ import annotations

import random
import re
from datetime import UTC, datetime, timedelta
from urllib.parse import quote, unquote

import pytest

from tierpilot.gateway import sigv4
from tierpilot.gateway.errors import S3Error

DATE = "20261129T101500Z"
HEADERS = {"x-amz-date": DATE, "x-amz-content-sha256": sigv4.UNSIGNED_PAYLOAD, "host": "h"}


def _outcome(call: object) -> object:
    try:
        return call()  # type: ignore[operator]
    except S3Error as exc:
        return exc.code, exc.message


def test_authorization_headers_in_any_spacing_or_order_parse_as_the_long_way(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(5)
    values = {"Credential": ["AK/20261129/us-east-1/s3/aws4_request", "AK/2026/x", ""],
              "SignedHeaders": ["host;x-amz-date", "host", ""], "Signature": ["ab" * 32, ""]}
    spaces = ["", " ", "  ", "\t"]
    headers = ["AWS4-HMAC-SHA256 Credential=AK/20261129/us-east-1/s3/aws4_request, SignedHeaders=host;x-amz-date, "
               "Signature=" + "ab" * 32]
    for _ in range(3000):
        names = rng.sample(sorted(values), rng.choice([3, 3, 3, 2]))
        if rng.random() < 0.1:
            names.append(rng.choice(names))
        items = [f"{rng.choice(spaces)}{name}{rng.choice(['', ' '])}={rng.choice(['', ' '])}"
                 f"{rng.choice(values[name])}{rng.choice(spaces)}" for name in names]
        headers.append(rng.choice(["AWS4-HMAC-SHA256 ", "AWS4-HMAC-SHA256  ", "AWS4-HMAC-SHA1 "]) + ",".join(items))
    short = [_outcome(lambda h=h: sigv4.parse({**HEADERS, "authorization": h}, {})) for h in headers]
    assert sum(isinstance(o, sigv4.SignedRequest) for o in short) > 200
    monkeypatch.setattr(sigv4, "_AUTH_V4", re.compile(r"(?!)"))  # never matches: every header the long way
    assert short == [_outcome(lambda h=h: sigv4.parse({**HEADERS, "authorization": h}, {})) for h in headers]


def _canonical_query_by_the_spec(pairs: list[tuple[str, str]], presigned: bool) -> str:
    items = sorted((quote(k, safe="-_.~"), quote(v, safe="-_.~")) for k, v in pairs
                   if not (presigned and k == "X-Amz-Signature"))
    return "&".join(f"{k}={v}" for k, v in items)


def test_canonical_query_from_remembered_pairs_is_the_specs_and_never_keeps_a_signature() -> None:
    rng = random.Random(11)
    alphabet = ["a", "Z", "0", "-", "_", ".", "~", "/", " ", "=", "&", "+", "%", "é", "\U0001f600"]
    names = ["X-Amz-Date", "X-Amz-Credential", "X-Amz-Signature", "prefix", "a-b", "a", "a b", ""]
    for _ in range(2000):
        pairs = [(rng.choice(names), "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 6))))
                 for _ in range(rng.randint(0, 5))]
        presigned = rng.random() < 0.5
        expected = _canonical_query_by_the_spec(pairs, presigned)
        assert sigv4.canonical_query(pairs, presigned) == expected
        assert sigv4.canonical_query(pairs, presigned) == expected  # the second time from the remembered pairs
    signature = [("X-Amz-Signature", "ab" * 32), ("X-Amz-Date", DATE)]
    assert sigv4.canonical_query(signature, False) == f"X-Amz-Date={DATE}&X-Amz-Signature={'ab' * 32}"
    assert sigv4.canonical_query(signature, True) == f"X-Amz-Date={DATE}"
    assert not any(name == "X-Amz-Signature" for name, _ in sigv4._PAIRS)


def test_canonical_query_memory_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sigv4, "_PAIRS_MAX", 8)
    for i in range(20):
        assert sigv4.canonical_query([("k", f"v/{i}")], True) == f"k=v%2F{i}"
        assert len(sigv4._PAIRS) <= 8
    sigv4.canonical_query([("k", "v" * 200)], True)
    assert ("k", "v" * 200) not in sigv4._PAIRS


def test_canonical_uris_of_plain_and_encoded_paths() -> None:
    rng = random.Random(13)
    alphabet = ["a", "Z", "0", "-", "_", ".", "~", "/", "%2F", "%41", "%7e", " ", "+", "é", "%"]
    for _ in range(3000):
        raw = "/" + "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 8)))
        spec = quote(unquote(raw), safe="/~")
        assert sigv4.canonical_uris(raw) == ([spec] if spec == raw else [spec, raw])


def test_only_short_values_that_need_encoding_are_remembered() -> None:
    sigv4._quote_short.cache_clear()
    for raw in ("/b/a%20key", "/b/plain", "/b/" + "a%20" * 70, "/b/a%20key"):
        sigv4.canonical_uris(raw)
    info = sigv4._quote_short.cache_info()
    assert (info.currsize, info.hits) == (1, 1)  # "/b/a key", twice; not the plain path nor the long one
    assert info.maxsize is not None and info.maxsize <= 4096


def _signed(amz_date: str, presigned: bool, expires: int | None = None, version: int = 4) -> sigv4.SignedRequest:
    return sigv4.SignedRequest("AK", amz_date, amz_date[:8], "us-east-1", "s3", ("host",), "", sigv4.UNSIGNED_PAYLOAD,
                               presigned=presigned, expires=expires, version=version)


def test_request_times_at_the_edges_of_the_window() -> None:
    when = datetime(2026, 11, 29, 10, 15, tzinfo=UTC)
    at = when.timestamp()
    presigned = _signed(DATE, True, 60)
    sigv4.check_time(presigned, at + 60)  # the last second it is valid
    sigv4.check_time(presigned, at - 900)  # signed up to 15 minutes ahead of the clock
    with pytest.raises(S3Error) as exc:
        sigv4.check_time(presigned, at + 60.5)
    assert (exc.value.code, exc.value.message) == ("AccessDenied", "Request has expired")
    assert exc.value.fields == {"Expires": "2026-11-29T10:16:00Z", "ServerTime": "2026-11-29T10:16:00Z"}
    with pytest.raises(S3Error) as exc:
        sigv4.check_time(presigned, at - 900.5)
    assert (exc.value.code, exc.value.message) == ("AccessDenied", "Request is not valid yet")
    header = _signed(DATE, False)
    for edge in (-900, 900):
        sigv4.check_time(header, at + edge)
    for offset in (-900.5, 900.5):
        with pytest.raises(S3Error) as exc:
            sigv4.check_time(header, at + offset)
        assert exc.value.code == "RequestTimeTooSkewed"
        assert exc.value.fields["ServerTime"] == (when + timedelta(seconds=offset)).strftime("%Y-%m-%dT%H:%M:%SZ")
    with pytest.raises(S3Error) as exc:
        sigv4.check_time(_signed("20261129T101500", False), at)
    assert (exc.value.code, exc.value.message) == (
        "AccessDenied", "AWS authentication requires a valid Date or x-amz-date header")
    with pytest.raises(S3Error) as exc:
        sigv4.check_time(_signed("19691231T235959Z", False, version=2), at)
    assert exc.value.code == "AccessDenied"
    with pytest.raises(S3Error) as exc:
        sigv4.check_time(_signed("19700101T000000Z", False, version=2), at)
    assert exc.value.code == "RequestTimeTooSkewed"
    v2 = _signed("", True, int(at) + 5, version=2)
    sigv4.check_time(v2, at + 5)
    with pytest.raises(S3Error) as exc:
        sigv4.check_time(v2, at + 5.5)
    assert exc.value.fields == {"Expires": "2026-11-29T10:15:05Z", "ServerTime": "2026-11-29T10:15:05Z"}
