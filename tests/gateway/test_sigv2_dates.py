"""Request dates as S3 judges them. Signature V2 (boto3 signing with an x-amz-date it was given): a date that is not
one, or before the epoch, is AccessDenied; a real date too far off is RequestTimeTooSkewed; nothing is stored.
Presigned URLs made to have expired or to live past a week are AccessDenied."""

from __future__ import annotations

from typing import Any

import pytest
from botocore.client import BaseClient
from botocore.exceptions import ClientError

from tests.gateway.conftest import Gateway, catalog_rows


@pytest.mark.parametrize(("date", "code"), [
    ("Bad Date", "AccessDenied"),
    ("", "AccessDenied"),
    ("Tue, 07 Jul 1950 21:53:04 GMT", "AccessDenied"),
    ("Tue, 07 Jul 2010 21:53:04 GMT", "RequestTimeTooSkewed"),
    ("Tue, 07 Jul 9999 21:53:04 GMT", "RequestTimeTooSkewed"),
])
def test_v2_dates(gateway: Gateway, s3: BaseClient, bucket: str, date: str, code: str) -> None:
    v2 = gateway.client("alice", signature_version="s3")

    def dated(request: Any, **_: Any) -> None:
        request.headers["x-amz-date"] = date

    v2.meta.events.register_first("before-sign.s3.PutObject", dated)
    with pytest.raises(ClientError) as e:
        v2.put_object(Bucket=bucket, Key="dated", Body=b"x")
    assert (e.value.response["ResponseMetadata"]["HTTPStatusCode"], e.value.response["Error"]["Code"]) == (403, code)
    assert catalog_rows(bucket) == []


@pytest.mark.parametrize("expires", [-7, 604801])
def test_presigned_urls_out_of_range_are_refused_as_expired(gateway: Gateway, s3: BaseClient, bucket: str,
                                                            expires: int) -> None:
    import requests
    from botocore.auth import S3SigV4QueryAuth
    from botocore.awsrequest import AWSRequest
    from botocore.credentials import Credentials

    s3.put_object(Bucket=bucket, Key="k", Body=b"v")
    # botocore's own signer: with awscrt installed boto3 signs through the CRT, which refuses a negative expiry
    # before any request is made, and a client can still send one
    alice = gateway.users["alice"]
    signed = AWSRequest(method="GET", url=f"{gateway.url}/{bucket}/k")
    S3SigV4QueryAuth(Credentials(alice.access_key_id, alice.secret_access_key), "s3", "us-east-1",
                     expires=expires).add_auth(signed)
    r = requests.get(signed.url, timeout=10)
    assert r.status_code == 403 and "<Code>AccessDenied</Code>" in r.text
