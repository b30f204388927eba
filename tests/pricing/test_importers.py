from __future__ import annotations

import json
from datetime import date
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from tierpilot.kit.errors import Invalid
from tierpilot.pricing.catalogs import shipped_catalogs
from tierpilot.pricing.engine import evaluate
from tierpilot.pricing.importers import import_aws_price_list, import_azure_retail_prices
from tierpilot.pricing.schemas import Scenario

SAMPLES = Path(__file__).parent / "samples"


def _load(name: str) -> Any:
    return json.loads((SAMPLES / name).read_text())


def aws_offers() -> list[Any]:
    return [_load("aws-price-list-AmazonS3-us-east-1.json"),
            _load("aws-price-list-AmazonS3GlacierDeepArchive-us-east-1.json")]


def azure_pages() -> list[Any]:
    return [_load("azure-retail-prices-eastus-page1.json"), _load("azure-retail-prices-eastus-page2.json")]


def test_aws_price_list_gives_the_same_prices_as_the_shipped_catalog() -> None:
    imported = import_aws_price_list(aws_offers(), region="us-east-1")
    shipped = shipped_catalogs()["aws-us-east-1-2026"]
    assert imported.id == "aws-us-east-1-2026" and imported.valid_from == date(2026, 7, 28)
    assert {c.id for c in imported.classes} == {"STANDARD", "INTELLIGENT_TIERING", "STANDARD_IA", "GLACIER_IR",
                                                "GLACIER", "DEEP_ARCHIVE"}
    for cls in imported.classes:
        ref = shipped.storage_class(cls.id)
        assert cls.storage == ref.storage, cls.id
        assert cls.requests == ref.requests, cls.id
        assert cls.retrieval_per_gib == ref.retrieval_per_gib, cls.id
        assert cls.min_storage_days == ref.min_storage_days, cls.id
        assert cls.min_billable_bytes == ref.min_billable_bytes, cls.id
        assert cls.object_overhead == ref.object_overhead, cls.id
        assert {s: (r.per_gib, r.per_1k_requests) for s, r in cls.restore.items()} == \
            {s: (r.per_gib, r.per_1k_requests) for s, r in ref.restore.items()}, cls.id
    assert imported.egress["internet"] == shipped.egress["internet"]


def test_aws_requests_are_converted_from_per_request_to_per_thousand() -> None:
    c = import_aws_price_list(aws_offers(), region="us-east-1")
    assert c.storage_class("STANDARD").requests.write_per_1k == Decimal("0.005")
    assert c.storage_class("GLACIER").restore["expedited"].per_1k_requests == Decimal("10")
    assert c.storage_class("INTELLIGENT_TIERING").monitoring_per_1k_objects == Decimal("0.0025")


def test_aws_lifecycle_transitions_are_told_apart_from_restores_on_the_same_usage_type() -> None:
    c = import_aws_price_list(aws_offers(), region="us-east-1")
    assert c.storage_class("GLACIER").transition_per_1k == Decimal("0.03")
    assert c.storage_class("GLACIER").restore["standard"].per_1k_requests == Decimal("0.05")
    assert c.storage_class("DEEP_ARCHIVE").transition_per_1k == Decimal("0.05")
    assert c.storage_class("STANDARD_IA").transition_per_1k == Decimal("0.01")


def test_aws_intelligent_tiering_gets_its_access_tiers() -> None:
    it = import_aws_price_list(aws_offers(), region="us-east-1").storage_class("INTELLIGENT_TIERING")
    assert [(t.after_idle_days, t.storage[-1].price) for t in it.access_tiers] == [
        (0, Decimal("0.021")), (30, Decimal("0.0125")), (90, Decimal("0.004"))]


def test_aws_products_of_other_regions_are_ignored() -> None:
    c = import_aws_price_list(aws_offers(), region="us-east-1")
    assert c.storage_class("STANDARD").storage[0].price == Decimal("0.023")
    with pytest.raises(Invalid, match="2 regions"):
        import_aws_price_list(aws_offers())


def test_aws_import_refuses_what_is_not_a_price_list() -> None:
    with pytest.raises(Invalid, match="not an AWS Price List"):
        import_aws_price_list([{"Items": []}])
    with pytest.raises(Invalid, match="no storage prices"):
        import_aws_price_list(aws_offers(), region="sa-east-1")


def test_azure_retail_prices_pages_give_the_blob_tiers() -> None:
    c = import_azure_retail_prices(azure_pages(), region="eastus")
    assert c.id == "azure-eastus-2026" and c.region == "eastus" and c.valid_from == date(2026, 7, 1)
    assert [k.id for k in c.classes] == ["HOT", "COOL", "COLD", "ARCHIVE"]
    hot = c.storage_class("HOT")
    assert [(b.up_to_gib, b.price) for b in hot.storage] == [
        (Decimal(51200), Decimal("0.0208")), (Decimal(512000), Decimal("0.019968")), (None, Decimal("0.019136"))]
    assert hot.requests.write_per_1k == Decimal("0.0065") and hot.requests.read_per_1k == Decimal("0.0005")
    cool = c.storage_class("COOL")
    assert cool.retrieval_per_gib == Decimal("0.01") and cool.min_storage_days == 30
    assert cool.transition_per_1k == Decimal("0.013")
    archive = c.storage_class("ARCHIVE")
    assert archive.restore["standard"].per_gib == Decimal("0.02")
    assert archive.restore["standard"].per_1k_requests == Decimal("0.65")
    assert archive.restore["expedited"].per_gib == Decimal("0.10")
    assert archive.restore["expedited"].per_1k_requests == Decimal("7")
    assert archive.min_storage_days == 180 and archive.restored_copy_class == "HOT"
    assert [b.price for b in c.egress["internet"]] == [0, Decimal("0.087"), Decimal("0.083"), Decimal("0.07"),
                                                       Decimal("0.05")]


def test_azure_import_ignores_other_regions_redundancies_and_reservations() -> None:
    c = import_azure_retail_prices(azure_pages(), region="eastus")
    assert c.storage_class("HOT").storage[0].price == Decimal("0.0208")
    grs = import_azure_retail_prices(azure_pages(), region="eastus", redundancy="GRS")
    assert [k.id for k in grs.classes] == ["HOT"] and grs.storage_class("HOT").storage[0].price == Decimal("0.0458")
    with pytest.raises(Invalid, match=r"2 regions \(eastus, westeurope\); name one"):
        import_azure_retail_prices(azure_pages())


def test_imported_catalogs_feed_the_engine() -> None:
    aws = import_aws_price_list(aws_offers(), region="us-east-1", catalog_id="aws-imported-2026")
    azure = import_azure_retail_prices(azure_pages(), region="eastus", catalog_id="azure-imported-2026")
    s = Scenario.model_validate({"catalog": "aws-imported-2026",
                                 "tiers": ["STANDARD", "GLACIER", "azure-imported-2026:ARCHIVE"],
                                 "volume_gib": 1000, "objects": 1000, "reads_per_month": 0.1})
    ev = evaluate(s, {aws.id: aws, azure.id: azure})
    assert [t.monthly.storage for t in ev.tiers][0] == Decimal(1000) * Decimal("0.023")
    assert ev.cheapest[0].tier == "azure-imported-2026:ARCHIVE"
