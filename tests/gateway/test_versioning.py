"""Bucket versioning through boto3 on a real gateway: version ids, delete markers, reads and deletes by
version, ListObjectVersions paging, suspended buckets' "null" version, copies of old versions, totals."""

from __future__ import annotations

import pytest
from botocore.client import BaseClient
from botocore.exceptions import ClientError

from tests.gateway.conftest import Gateway, blob_files


def _versioned(s3: BaseClient, bucket: str) -> str:
    s3.put_bucket_versioning(Bucket=bucket, VersioningConfiguration={"Status": "Enabled"})
    return bucket


def _code(exc: pytest.ExceptionInfo[ClientError]) -> str:
    return str(exc.value.response["Error"]["Code"])


def test_versioning_state_is_absent_then_enabled_then_suspended(s3: BaseClient, bucket: str) -> None:
    assert "Status" not in s3.get_bucket_versioning(Bucket=bucket)
    _versioned(s3, bucket)
    assert s3.get_bucket_versioning(Bucket=bucket)["Status"] == "Enabled"
    s3.put_bucket_versioning(Bucket=bucket, VersioningConfiguration={"Status": "Suspended"})
    assert s3.get_bucket_versioning(Bucket=bucket)["Status"] == "Suspended"
    with pytest.raises(ClientError) as exc:
        s3.put_bucket_versioning(Bucket=bucket, VersioningConfiguration={"Status": "Sometimes"})  # type: ignore[typeddict-item]
    assert _code(exc) == "MalformedXML"


def test_overwrites_keep_every_version_readable_by_id(s3: BaseClient, bucket: str, gateway: Gateway) -> None:
    _versioned(s3, bucket)
    ids = [s3.put_object(Bucket=bucket, Key="k", Body=f"v{i}".encode())["VersionId"] for i in range(3)]
    assert len(set(ids)) == 3 and "null" not in ids
    assert s3.get_object(Bucket=bucket, Key="k")["Body"].read() == b"v2"
    for i, vid in enumerate(ids):
        got = s3.get_object(Bucket=bucket, Key="k", VersionId=vid)
        assert got["Body"].read() == f"v{i}".encode()
        assert got["VersionId"] == vid
        assert s3.head_object(Bucket=bucket, Key="k", VersionId=vid)["ContentLength"] == 2
    listed = s3.list_object_versions(Bucket=bucket)["Versions"]
    assert [(v["VersionId"], v["IsLatest"]) for v in listed] == [(ids[2], True), (ids[1], False), (ids[0], False)]
    with pytest.raises(ClientError) as exc:
        s3.get_object(Bucket=bucket, Key="k", VersionId="nope")
    assert _code(exc) == "NoSuchVersion"


def test_delete_makes_a_marker_and_deleting_the_marker_brings_the_object_back(s3: BaseClient, bucket: str) -> None:
    _versioned(s3, bucket)
    first = s3.put_object(Bucket=bucket, Key="k", Body=b"one")["VersionId"]
    deleted = s3.delete_object(Bucket=bucket, Key="k")
    assert deleted["DeleteMarker"] is True
    marker = deleted["VersionId"]
    with pytest.raises(ClientError) as exc:
        s3.get_object(Bucket=bucket, Key="k")
    assert _code(exc) == "NoSuchKey"
    assert exc.value.response["ResponseMetadata"]["HTTPHeaders"]["x-amz-delete-marker"] == "true"
    assert s3.list_objects_v2(Bucket=bucket)["KeyCount"] == 0
    page = s3.list_object_versions(Bucket=bucket)
    assert [(m["VersionId"], m["IsLatest"]) for m in page["DeleteMarkers"]] == [(marker, True)]
    assert [(v["VersionId"], v["IsLatest"]) for v in page["Versions"]] == [(first, False)]
    with pytest.raises(ClientError) as exc:
        s3.head_object(Bucket=bucket, Key="k", VersionId=marker)
    assert exc.value.response["ResponseMetadata"]["HTTPStatusCode"] == 405
    s3.delete_object(Bucket=bucket, Key="k", VersionId=marker)
    assert s3.get_object(Bucket=bucket, Key="k")["Body"].read() == b"one"
    with pytest.raises(ClientError) as exc:
        s3.delete_bucket(Bucket=bucket)
    assert _code(exc) == "BucketNotEmpty"


def test_deleting_the_current_version_promotes_the_previous_one_and_frees_its_blob(
        s3: BaseClient, bucket: str, gateway: Gateway) -> None:
    _versioned(s3, bucket)
    before = set(blob_files(gateway.tier_dirs["hot-disk"]))
    old = s3.put_object(Bucket=bucket, Key="k", Body=b"old")["VersionId"]
    new = s3.put_object(Bucket=bucket, Key="k", Body=b"newer")["VersionId"]
    assert len(set(blob_files(gateway.tier_dirs["hot-disk"])) - before) == 2
    assert s3.delete_object(Bucket=bucket, Key="k", VersionId=new)["VersionId"] == new
    assert s3.get_object(Bucket=bucket, Key="k")["Body"].read() == b"old"
    s3.delete_object(Bucket=bucket, Key="k", VersionId=old)
    assert set(blob_files(gateway.tier_dirs["hot-disk"])) - before == set()
    assert "Versions" not in s3.list_object_versions(Bucket=bucket)
    s3.delete_bucket(Bucket=bucket)


def test_list_object_versions_pages_with_key_and_version_markers(s3: BaseClient, bucket: str) -> None:
    _versioned(s3, bucket)
    expected = []
    for key in ("a", "b/1", "b/2", "c"):
        ids = [s3.put_object(Bucket=bucket, Key=key, Body=b"x")["VersionId"] for _ in range(2)]
        expected += [(key, ids[1]), (key, ids[0])]
    seen: list[tuple[str, str]] = []
    kwargs: dict[str, str] = {}
    while True:
        page = s3.list_object_versions(Bucket=bucket, MaxKeys=3, **kwargs)  # type: ignore[arg-type]
        seen += [(v["Key"], v["VersionId"]) for v in page.get("Versions", [])]
        if not page["IsTruncated"]:
            break
        kwargs = {"KeyMarker": page["NextKeyMarker"], "VersionIdMarker": page["NextVersionIdMarker"]}
    assert seen == expected
    folders = s3.list_object_versions(Bucket=bucket, Delimiter="/")
    assert [p["Prefix"] for p in folders["CommonPrefixes"]] == ["b/"]
    assert [v["Key"] for v in folders["Versions"]] == ["a", "a", "c", "c"]
    inside = s3.list_object_versions(Bucket=bucket, Prefix="b/")
    assert [v["Key"] for v in inside["Versions"]] == ["b/1", "b/1", "b/2", "b/2"]


def test_suspended_bucket_writes_replace_the_null_version(s3: BaseClient, bucket: str) -> None:
    _versioned(s3, bucket)
    kept = s3.put_object(Bucket=bucket, Key="k", Body=b"versioned")["VersionId"]
    s3.put_bucket_versioning(Bucket=bucket, VersioningConfiguration={"Status": "Suspended"})
    assert "VersionId" not in s3.put_object(Bucket=bucket, Key="k", Body=b"null-1")  # S3 names no "null" id
    s3.put_object(Bucket=bucket, Key="k", Body=b"null-2")
    versions = s3.list_object_versions(Bucket=bucket)["Versions"]
    assert [v["VersionId"] for v in versions] == ["null", kept]
    assert s3.get_object(Bucket=bucket, Key="k", VersionId="null")["Body"].read() == b"null-2"


def test_copy_of_an_old_version_restores_it_as_the_newest(s3: BaseClient, bucket: str) -> None:
    _versioned(s3, bucket)
    old = s3.put_object(Bucket=bucket, Key="k", Body=b"good")["VersionId"]
    s3.put_object(Bucket=bucket, Key="k", Body=b"bad")
    copied = s3.copy_object(Bucket=bucket, Key="k", CopySource={"Bucket": bucket, "Key": "k", "VersionId": old})
    assert copied["CopySourceVersionId"] == old
    assert s3.get_object(Bucket=bucket, Key="k")["Body"].read() == b"good"
    assert len(s3.list_object_versions(Bucket=bucket)["Versions"]) == 3


def test_multi_delete_by_version_and_marker(s3: BaseClient, bucket: str) -> None:
    _versioned(s3, bucket)
    a = s3.put_object(Bucket=bucket, Key="a", Body=b"1")["VersionId"]
    s3.put_object(Bucket=bucket, Key="b", Body=b"2")
    out = s3.delete_objects(Bucket=bucket, Delete={"Objects": [{"Key": "a", "VersionId": a}, {"Key": "b"}]})
    by_key = {d["Key"]: d for d in out["Deleted"]}
    assert by_key["a"]["VersionId"] == a and "DeleteMarker" not in by_key["a"]
    assert by_key["b"]["DeleteMarker"] is True and by_key["b"]["DeleteMarkerVersionId"]
    page = s3.list_object_versions(Bucket=bucket)
    assert [v["Key"] for v in page["Versions"]] == ["b"]
    assert [m["Key"] for m in page["DeleteMarkers"]] == ["b"]


def test_versioned_multipart_upload_keeps_the_previous_version(s3: BaseClient, bucket: str) -> None:
    _versioned(s3, bucket)
    first = s3.put_object(Bucket=bucket, Key="big", Body=b"small")["VersionId"]
    upload = s3.create_multipart_upload(Bucket=bucket, Key="big")["UploadId"]
    part = s3.upload_part(Bucket=bucket, Key="big", UploadId=upload, PartNumber=1, Body=b"p" * 1024)
    s3.complete_multipart_upload(Bucket=bucket, Key="big", UploadId=upload,
                                 MultipartUpload={"Parts": [{"PartNumber": 1, "ETag": part["ETag"]}]})
    listed = s3.list_object_versions(Bucket=bucket)["Versions"]
    assert [v["Size"] for v in listed] == [1024, 5]
    assert listed[1]["VersionId"] == first
    assert s3.get_object(Bucket=bucket, Key="big", VersionId=first)["Body"].read() == b"small"


def test_fsck_counts_noncurrent_versions_and_finds_no_orphans_among_them(s3: BaseClient, bucket: str) -> None:
    from tierpilot.lifecycle.fsck import fsck

    _versioned(s3, bucket)
    for body in (b"1", b"22", b"333"):
        s3.put_object(Bucket=bucket, Key="k", Body=body)
    s3.delete_object(Bucket=bucket, Key="k")
    report = fsck(min_age_s=0, tier_names=["hot-disk"])
    mine = [f for f in report.findings if f.bucket == bucket]
    assert mine == []
    assert report.objects >= 3
