"""Server-side copies of the cloud drivers, checked where the driver meets the service.

GCS: a rewrite (copy, lifecycle move) and a compose (multipart complete) must carry the destination's storage
class in their request, since that is the only way GCS sets it on a server-side copy. fake-gcs-server 1.54
stores neither (its rewrite and compose ignore ``storageClass``; docs/tiers.md), so the tests read the
requests the driver sent on its own HTTP session and the emulator's real answers, and say what it stored.
Azure: a copy from an Azure tier is the service's Copy Blob (the new blob records the copy and its source) in
the class asked for, inside one account and from another one whose tier can authorize the source URL."""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
import requests

from tierpilot.drivers.azure import AzureBlobDriver
from tierpilot.drivers.gcs import GCSDriver


@dataclass
class Sent:
    kind: str  # "rewrite" | "compose"
    body: dict[str, Any]
    status: int
    answer: dict[str, Any]


def _record(driver: GCSDriver) -> list[Sent]:
    """Every rewrite and compose request the driver sends, with the service's answer."""
    sent: list[Sent] = []

    def hook(reply: requests.Response, *_: Any, **__: Any) -> None:
        url = reply.request.url or ""
        kind = "rewrite" if "/rewriteTo/" in url else "compose" if url.split("?")[0].endswith("/compose") else None
        if kind is not None:
            raw = reply.request.body or b"{}"
            sent.append(Sent(kind, json.loads(raw), reply.status_code, reply.json()))

    driver.session.hooks["response"].append(hook)
    return sent


def _read(driver: GCSDriver | AzureBlobDriver, locator: str) -> bytes:
    return b"".join(driver.open(locator))


@pytest.fixture
def coldline(gcs_driver: GCSDriver) -> GCSDriver:
    """A COLDLINE tier on the same bucket and endpoint as ``gcs_driver`` (so copies between them are rewrites)."""
    return GCSDriver("cold", bucket=gcs_driver.bucket_name, prefix="cold/", endpoint_url=gcs_driver.endpoint_url,
                     storage_class="COLDLINE")


def test_gcs_rewrite_asks_for_the_class_asked_or_the_tiers_own(gcs_driver: GCSDriver, coldline: GCSDriver) -> None:
    gcs_driver.put("b/k~1", iter([b"warm bytes"]))
    sent = _record(coldline)
    # a lifecycle move names the class; a copy that names none gets the destination tier's class
    coldline.copy_from(gcs_driver, "b/k~1", "b/moved~1", storage_class="GLACIER_IR")
    coldline.copy_from(gcs_driver, "b/k~1", "b/plain~1")
    assert [(s.kind, s.body.get("storageClass"), s.status) for s in sent] == [
        ("rewrite", "COLDLINE", 200), ("rewrite", "COLDLINE", 200)]
    assert all(s.answer["done"] is True for s in sent)
    assert _read(coldline, "b/moved~1") == _read(coldline, "b/plain~1") == b"warm bytes"
    # and back to the warm tier: the class of the warm tier is asked for
    back = _record(gcs_driver)
    gcs_driver.copy_from(coldline, "b/moved~1", "b/back~1", storage_class="STANDARD")
    assert [(s.kind, s.body.get("storageClass")) for s in back] == [("rewrite", "STANDARD")]
    # what the emulator stored is what the driver reports: its answer's class, which it took from nowhere
    stored = sent[0].answer["resource"].get("storageClass", "STANDARD")
    assert coldline.head("b/moved~1").storage_class == stored


def test_gcs_compose_asks_for_the_class_and_a_long_join_rewrites_into_it(gcs_driver: GCSDriver) -> None:
    sent = _record(gcs_driver)
    parts = [gcs_driver.put_part("up", n, iter([bytes([n]) * 3]))[0] for n in (1, 2)]
    assert gcs_driver.complete_multipart("up", "b/two~1", parts, storage_class="NEARLINE") == 6
    assert [(s.kind, s.body["destination"].get("storageClass")) for s in sent] == [("compose", "NEARLINE")]
    sent.clear()
    parts = [gcs_driver.put_part("long", n, iter([bytes([n])]))[0] for n in range(1, 35)]
    assert gcs_driver.complete_multipart("long", "b/long~1", parts, storage_class="ARCHIVE") == 34
    # chained composes into a scratch object (STANDARD: it is read again), then one rewrite that sets the class
    assert [s.kind for s in sent] == ["compose", "compose", "rewrite"]
    assert sent[-1].body["storageClass"] == "ARCHIVE"
    assert _read(gcs_driver, "b/long~1") == bytes(range(1, 35))
    gcs_driver.abort_multipart("long")
    assert list(gcs_driver.client.list_blobs(gcs_driver.bucket_name, prefix="tp/%p/")) != []  # "up" still there
    gcs_driver.abort_multipart("up")
    assert list(gcs_driver.client.list_blobs(gcs_driver.bucket_name, prefix="tp/%p/")) == []


def test_azure_copy_inside_the_account_is_copy_blob_in_the_class_asked(azure_driver: AzureBlobDriver) -> None:
    cool = AzureBlobDriver("cool", container=azure_driver.container, prefix="cool/", access_tier="COOL",
                           connection_string=_connection_string(azure_driver))
    azure_driver.put("b/k~1", iter([b"hot bytes"]))
    assert cool.copy_from(azure_driver, "b/k~1", "b/moved~1").size == 9
    assert cool.copy_from(azure_driver, "b/k~1", "b/hot~1", storage_class="STANDARD").size == 9
    props = cool.container_client.get_blob_client("cool/b/moved~1").get_blob_properties()
    assert (props.copy.status, str(props.blob_tier)) == ("success", "Cool")
    assert props.copy.source is not None and props.copy.source.split("?")[0].endswith("/tp/b/k~1")
    assert cool.head("b/hot~1").storage_class == "HOT"
    assert _read(cool, "b/moved~1") == b"hot bytes"


def test_azure_copy_from_another_account_is_copy_blob_authorized_by_the_source_tier(
        azure_driver: AzureBlobDriver) -> None:
    from azure.storage.blob import ContainerSasPermissions, generate_container_sas

    from tests.emulators import AZURITE_OTHER_ACCOUNT, AZURITE_OTHER_KEY

    other_url = f"{azure_driver.account_url.rsplit('/', 1)[0]}/{AZURITE_OTHER_ACCOUNT}"
    container = f"other-{uuid.uuid4().hex[:12]}"
    keyed = AzureBlobDriver("keyed", account_url=other_url, account_key=AZURITE_OTHER_KEY, container=container)
    keyed.container_client.create_container()
    keyed.put("b/k~1", iter([b"elsewhere"]))
    sas = generate_container_sas(AZURITE_OTHER_ACCOUNT, container, account_key=AZURITE_OTHER_KEY,
                                 permission=ContainerSasPermissions(read=True, list=True),
                                 expiry=datetime.now(UTC) + timedelta(hours=1))
    signed = AzureBlobDriver("signed", account_url=other_url, sas_token=sas, container=container)
    # the account key signs a SAS for the source; a SAS tier's own token authorizes it
    for source, target in ((keyed, "b/in~1"), (signed, "b/in~2")):
        assert azure_driver.copy_from(source, "b/k~1", target, storage_class="COOL").size == 9
        props = azure_driver.container_client.get_blob_client(f"tp/{target}").get_blob_properties()
        assert (props.copy.status, str(props.blob_tier)) == ("success", "Cool")
        assert f"/{AZURITE_OTHER_ACCOUNT}/{container}/" in (props.copy.source or "")
        assert _read(azure_driver, target) == b"elsewhere"
    anonymous = AzureBlobDriver("anonymous", account_url=other_url, container=container)
    assert not azure_driver.copies_from(anonymous)  # nothing could authorize the source: bytes go through us


def _connection_string(driver: AzureBlobDriver) -> str:
    from tests.emulators import azurite_connection_string

    return azurite_connection_string(driver.account_url)
