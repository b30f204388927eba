"""Build price catalogs from providers' machine-readable price lists.

- AWS Price List bulk files (`offers/v1.0/aws/AmazonS3/current/<region>/index.json`, plus the
  AmazonGlacier and AmazonS3GlacierDeepArchive offers where a class lives there).
- Azure Retail Prices API answers (`/api/retail/prices?$filter=…`, one or more pages).

Price lists carry prices only. The rules of each class (minimum duration, minimum billable
size, per-object overhead, restore times) come from the providers' documentation, kept in the
tables below; the research-network egress is estimated at 30 % of internet egress, as in the
case study.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from datetime import date, datetime
from decimal import Decimal
from typing import Any

from tierpilot.kit.errors import Invalid
from tierpilot.pricing.catalogs import validate_catalog
from tierpilot.pricing.schemas import Catalog

RESEARCH_NETWORK_SHARE = Decimal("0.3")
Range = tuple[Decimal, Decimal | None, Decimal]  # (begin, end or None, price)
KIB = 1024

# ---------------------------------------------------------------------------- shared helpers


class _Draft:
    """A catalog being assembled: classes as plain dicts, validated at the end."""

    def __init__(self) -> None:
        self.classes: dict[str, dict[str, Any]] = {}
        self.egress: list[dict[str, Any]] = []

    def cls(self, class_id: str) -> dict[str, Any]:
        return self.classes.setdefault(class_id, {"id": class_id})

    def set(self, class_id: str, path: str, value: Any) -> None:
        node = self.cls(class_id)
        keys = path.split(".")
        for key in keys[:-1]:
            node = node.setdefault(key, {})
        node[keys[-1]] = value

    def build(self, meta: dict[str, Any], rules: Mapping[str, Mapping[str, Any]],
              names: Mapping[str, str]) -> Catalog:
        classes = []
        for class_id, found in self.classes.items():
            if "storage" not in found:
                continue  # a class is only priced when the list gives its storage rate
            merged = _merge_rules(found, rules.get(class_id, {}))
            merged.setdefault("name", names.get(class_id, class_id))
            if merged.get("restore"):
                merged["restore"] = {s: r for s, r in merged["restore"].items() if "per_gib" in r}
                for r in merged["restore"].values():
                    r.setdefault("per_1k_requests", 0)
            classes.append(merged)
        if not classes:
            raise Invalid("the price list holds no storage prices for that region")
        internet = self.egress or [{"price": 0}]
        data = {**meta, "classes": classes,
                "egress": {"internet": internet,
                           "research-network": [{**b, "price": Decimal(str(b["price"])) * RESEARCH_NETWORK_SHARE}
                                                for b in internet],
                           "same-region": [{"price": 0}]},
                "estimated": ["egress.research-network"]}
        return validate_catalog(data)


def _merge_rules(found: dict[str, Any], rules: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(found)
    for key, value in rules.items():
        if key == "restore":
            restore = {s: dict(r) for s, r in out.get("restore", {}).items()}
            for speed, hours in value.items():
                if speed in restore:
                    restore[speed].update(hours)
            out["restore"] = restore
        else:
            out.setdefault(key, value)
    return out


def _bands(ranges: Iterable[Range]) -> list[dict[str, Any]]:
    """Price bands from (begin, end or None, price) ranges."""
    out = []
    for _begin, end, price in sorted(ranges, key=lambda r: r[0]):
        out.append({"price": price} if end is None else {"up_to_gib": end, "price": price})
    if out and "up_to_gib" in out[-1]:
        out.append({"price": out[-1]["price"]})
    return out


def _catalog_id(provider: str, region: str, when: date) -> str:
    return f"{provider}-{region}-{when.year}"


# ---------------------------------------------------------------------------- AWS Price List

# usagetype (region prefix removed) -> (class, field)
_AWS_USAGE: dict[str, tuple[str, str]] = {
    "TimedStorage-ByteHrs": ("STANDARD", "storage"),
    "TimedStorage-INT-FA-ByteHrs": ("INTELLIGENT_TIERING", "access:0"),
    "TimedStorage-INT-IA-ByteHrs": ("INTELLIGENT_TIERING", "access:30"),
    "TimedStorage-INT-AIA-ByteHrs": ("INTELLIGENT_TIERING", "access:90"),
    "TimedStorage-SIA-ByteHrs": ("STANDARD_IA", "storage"),
    "TimedStorage-ZIA-ByteHrs": ("ONEZONE_IA", "storage"),
    "TimedStorage-GIR-ByteHrs": ("GLACIER_IR", "storage"),
    "TimedStorage-GlacierByteHrs": ("GLACIER", "storage"),
    "TimedStorage-GDA-ByteHrs": ("DEEP_ARCHIVE", "storage"),
    "Requests-Tier1": ("STANDARD", "requests.write_per_1k"),
    "Requests-Tier2": ("STANDARD", "requests.read_per_1k"),
    "Requests-INT-Tier1": ("INTELLIGENT_TIERING", "requests.write_per_1k"),
    "Requests-INT-Tier2": ("INTELLIGENT_TIERING", "requests.read_per_1k"),
    "Requests-SIA-Tier1": ("STANDARD_IA", "requests.write_per_1k"),
    "Requests-SIA-Tier2": ("STANDARD_IA", "requests.read_per_1k"),
    "Requests-ZIA-Tier1": ("ONEZONE_IA", "requests.write_per_1k"),
    "Requests-ZIA-Tier2": ("ONEZONE_IA", "requests.read_per_1k"),
    "Requests-GIR-Tier1": ("GLACIER_IR", "requests.write_per_1k"),
    "Requests-GIR-Tier2": ("GLACIER_IR", "requests.read_per_1k"),
    "Requests-GLACIER-Tier1": ("GLACIER", "requests.write_per_1k"),
    "Requests-GLACIER-Tier2": ("GLACIER", "requests.read_per_1k"),
    "Requests-GDA-Tier1": ("DEEP_ARCHIVE", "requests.write_per_1k"),
    "Requests-GDA-Tier2": ("DEEP_ARCHIVE", "requests.read_per_1k"),
    # restore requests: Tier3 (standard), Tier5 (bulk), Tier6 (expedited); Tier3 also carries transitions
    "Requests-Tier3": ("GLACIER", "restore.standard.per_1k_requests"),
    "Requests-Tier5": ("GLACIER", "restore.bulk.per_1k_requests"),
    "Requests-Tier6": ("GLACIER", "restore.expedited.per_1k_requests"),
    "Requests-GDA-Tier3": ("DEEP_ARCHIVE", "restore.standard.per_1k_requests"),
    "Requests-GDA-Tier5": ("DEEP_ARCHIVE", "restore.bulk.per_1k_requests"),
    "Retrieval-SIA": ("STANDARD_IA", "retrieval_per_gib"),
    "Retrieval-ZIA": ("ONEZONE_IA", "retrieval_per_gib"),
    "Retrieval-GIR": ("GLACIER_IR", "retrieval_per_gib"),
    "Standard-Retrieval-Bytes": ("GLACIER", "restore.standard.per_gib"),
    "Bulk-Retrieval-Bytes": ("GLACIER", "restore.bulk.per_gib"),
    "Expedited-Retrieval-Bytes": ("GLACIER", "restore.expedited.per_gib"),
    "Monitoring-Automation-INT": ("INTELLIGENT_TIERING", "monitoring_per_1k_objects"),
}
# lifecycle transition operations (on Requests-Tier3/Tier4) -> target class
_AWS_TRANSITIONS = {
    "S3-SIATransition": "STANDARD_IA",
    "S3-ZIATransition": "ONEZONE_IA",
    "S3-INTTransition": "INTELLIGENT_TIERING",
    "S3-GIRTransition": "GLACIER_IR",
    "S3-GlacierTransition": "GLACIER",
    "S3-GDATransition": "DEEP_ARCHIVE",
}
_AWS_NAMES = {
    "STANDARD": "S3 Standard", "INTELLIGENT_TIERING": "S3 Intelligent-Tiering",
    "STANDARD_IA": "S3 Standard-Infrequent Access", "ONEZONE_IA": "S3 One Zone-Infrequent Access",
    "GLACIER_IR": "S3 Glacier Instant Retrieval", "GLACIER": "S3 Glacier Flexible Retrieval",
    "DEEP_ARCHIVE": "S3 Glacier Deep Archive",
}
_OVERHEAD = [{"bytes": 32 * KIB}, {"bytes": 8 * KIB, "billed_as": "STANDARD"}]
# from the S3 user guide (storage classes, restoring archived objects)
_AWS_RULES: dict[str, dict[str, Any]] = {
    "INTELLIGENT_TIERING": {"monitoring_min_object_bytes": 128 * KIB},
    "STANDARD_IA": {"min_storage_days": 30, "min_billable_bytes": 128 * KIB},
    "ONEZONE_IA": {"min_storage_days": 30, "min_billable_bytes": 128 * KIB},
    "GLACIER_IR": {"min_storage_days": 90, "min_billable_bytes": 128 * KIB},
    "GLACIER": {"min_storage_days": 90, "object_overhead": _OVERHEAD, "restored_copy_class": "STANDARD",
                "restore": {"expedited": {"typical_hours": Decimal("0.05"), "max_hours": Decimal("0.0833")},
                            "standard": {"typical_hours": 4, "max_hours": 5},
                            "bulk": {"typical_hours": 8, "max_hours": 12}}},
    "DEEP_ARCHIVE": {"min_storage_days": 180, "object_overhead": _OVERHEAD, "restored_copy_class": "STANDARD",
                     "restore": {"standard": {"typical_hours": 12, "max_hours": 12},
                                 "bulk": {"typical_hours": 48, "max_hours": 48}}},
}
_REGION_PREFIX = re.compile(r"^[A-Z0-9]{2,6}-(?=[A-Z][a-z])")


def _aws_dimensions(offer: Mapping[str, Any], sku: str) -> list[dict[str, Any]]:
    terms = offer.get("terms", {}).get("OnDemand", {}).get(sku, {})
    return [dim for term in terms.values() for dim in term.get("priceDimensions", {}).values()]


def _aws_ranges(dims: Sequence[Mapping[str, Any]], scale: Decimal = Decimal(1)) -> list[Range]:
    out = []
    for d in dims:
        end = d.get("endRange", "Inf")
        out.append((Decimal(str(d.get("beginRange", "0"))), None if end in ("Inf", "", None) else Decimal(str(end)),
                    Decimal(str(d["pricePerUnit"]["USD"])) * scale))
    return out


def import_aws_price_list(offers: Sequence[Mapping[str, Any]], region: str | None = None,
                          catalog_id: str | None = None, valid_from: date | None = None) -> Catalog:
    """A catalog from AWS Price List offer files of one region (AmazonS3 and, optionally, Glacier offers)."""
    if not offers:
        raise Invalid("no AWS price list given")
    draft = _Draft()
    regions: set[str] = set()
    versions: list[str] = []
    for offer in offers:
        if "products" not in offer or "terms" not in offer:
            raise Invalid("not an AWS Price List offer file (products and terms missing)")
        versions.append(str(offer.get("publicationDate") or offer.get("version") or ""))
        for sku, product in offer["products"].items():
            attrs = product.get("attributes", {})
            code = attrs.get("regionCode")
            if region is not None and code not in (region, None):
                continue
            usage = _REGION_PREFIX.sub("", attrs.get("usagetype", ""))
            dims = _aws_dimensions(offer, sku)
            if not dims:
                continue
            if product.get("productFamily") == "Data Transfer":
                if attrs.get("transferType") == "AWS Outbound" and usage.startswith("DataTransfer-Out-Bytes"):
                    draft.egress = _bands(_aws_ranges(dims))
                    regions.add(code or attrs.get("fromRegionCode", ""))
                continue
            operation = attrs.get("operation", "")
            if operation in _AWS_TRANSITIONS:
                price = _aws_ranges(dims, Decimal(1000))[0][2]
                draft.set(_AWS_TRANSITIONS[operation], "transition_per_1k", price)
                continue
            target = _AWS_USAGE.get(usage)
            if target is None:
                continue
            class_id, fieldpath = target
            if "DeepArchive" in (attrs.get("servicecode", "") + operation) and class_id == "GLACIER":
                class_id = "DEEP_ARCHIVE"
            if code:
                regions.add(code)
            _aws_store(draft, class_id, fieldpath, dims)
    regions.discard("")
    if region is None:
        if len(regions) != 1:
            raise Invalid(f"the price list covers {len(regions)} regions ({', '.join(sorted(regions))}); name one")
        region = regions.pop()
    published = max(v for v in versions if v) if any(versions) else ""
    when = valid_from or (_parse_date(published) if published else None)
    if when is None:
        raise Invalid("the price list has no publicationDate; give valid_from")
    _aws_finish_intelligent_tiering(draft)
    meta = {"id": catalog_id or _catalog_id("aws", region, when), "provider": "aws", "region": region,
            "currency": "USD", "valid_from": when,
            "source": [f"AWS Price List offers (AmazonS3 and Glacier) for {region}, published {published or when}"],
            "notes": "Imported from the AWS Price List; class rules from the S3 user guide."}
    return draft.build(meta, _AWS_RULES, _AWS_NAMES)


def _aws_store(draft: _Draft, class_id: str, fieldpath: str, dims: Sequence[Mapping[str, Any]]) -> None:
    if fieldpath == "storage":
        draft.set(class_id, "storage", _bands(_aws_ranges(dims)))
    elif fieldpath.startswith("access:"):
        draft.cls(class_id).setdefault("_access", {})[int(fieldpath.split(":")[1])] = _bands(_aws_ranges(dims))
    elif fieldpath.startswith(("requests.", "monitoring")) or fieldpath.endswith("per_1k_requests"):
        # AWS prices requests (and monitored objects) one by one
        draft.set(class_id, fieldpath, _aws_ranges(dims, Decimal(1000))[0][2])
    else:
        draft.set(class_id, fieldpath, _aws_ranges(dims)[0][2])


def _aws_finish_intelligent_tiering(draft: _Draft) -> None:
    it = draft.classes.get("INTELLIGENT_TIERING")
    if it is None:
        return
    access = it.pop("_access", {})
    names = {0: "Frequent Access", 30: "Infrequent Access", 90: "Archive Instant Access"}
    if 0 in access:
        it["storage"] = access[0]
        it["access_tiers"] = [{"name": names[d], "after_idle_days": d, "storage": access[d]} for d in sorted(access)]


def _parse_date(text: str) -> date:
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00")).date()
    except ValueError:
        return date(int(text[:4]), int(text[4:6]), int(text[6:8]))


# ---------------------------------------------------------------------------- Azure Retail Prices

_AZURE_TIERS = {"Hot": "HOT", "Cool": "COOL", "Cold": "COLD", "Archive": "ARCHIVE"}
_AZURE_NAMES = {"HOT": "Hot", "COOL": "Cool", "COLD": "Cold", "ARCHIVE": "Archive"}
# from the Azure Blob Storage documentation (access tiers, rehydration)
_AZURE_RULES: dict[str, dict[str, Any]] = {
    "COOL": {"min_storage_days": 30},
    "COLD": {"min_storage_days": 90},
    "ARCHIVE": {"min_storage_days": 180, "restored_copy_class": "HOT",
                "restore": {"standard": {"typical_hours": 10, "max_hours": 15},
                            "expedited": {"typical_hours": Decimal("0.5"), "max_hours": 1}}},
}
_UNIT = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([KM]?)\b")


def _per_unit(item: Mapping[str, Any]) -> Decimal:
    """Price per single unit ("10K" operations -> per operation, "1 GB/Month" -> per GB-month)."""
    m = _UNIT.match(str(item.get("unitOfMeasure", "1")))
    count = Decimal(m.group(1)) * {"": 1, "K": 1000, "M": 1_000_000}[m.group(2)] if m else Decimal(1)
    return Decimal(str(item["retailPrice"])) / count


def _azure_items(pages: Sequence[Any]) -> list[Mapping[str, Any]]:
    items: list[Mapping[str, Any]] = []
    for page in pages:
        if isinstance(page, Mapping) and "Items" in page:
            items.extend(page["Items"])
        elif isinstance(page, list):
            items.extend(page)
        else:
            raise Invalid("not an Azure Retail Prices answer (no Items)")
    return items


def import_azure_retail_prices(pages: Sequence[Any], region: str | None = None, redundancy: str = "LRS",
                               catalog_id: str | None = None, valid_from: date | None = None) -> Catalog:
    """A catalog of Azure Blob access tiers (one region, one redundancy) from Retail Prices API pages."""
    items = [i for i in _azure_items(pages) if i.get("type", "Consumption") == "Consumption"
             and i.get("currencyCode", "USD") == "USD"]
    blob = [i for i in items if i.get("serviceName") == "Storage" and "Block Blob" in str(i.get("productName", ""))
            or i.get("productName") == "Blob Storage"]
    regions = {i.get("armRegionName") for i in blob}
    if region is None:
        if len(regions) != 1:
            raise Invalid(f"the prices cover {len(regions)} regions ({', '.join(sorted(map(str, regions)))}); name one")
        region = str(regions.pop())
    blob = [i for i in blob if i.get("armRegionName") == region]
    # prefer general-purpose v2 accounts when both account kinds are listed
    if any(i.get("productName") == "General Block Blob v2" for i in blob):
        blob = [i for i in blob if i.get("productName") == "General Block Blob v2"]
    draft = _Draft()
    stored: dict[str, list[tuple[Decimal, Decimal]]] = {}
    starts: list[str] = []
    for item in blob:
        meter = str(item.get("meterName", ""))
        tier_word = meter.split(" ")[0]
        class_id = _AZURE_TIERS.get(tier_word)
        if class_id is None:
            continue
        starts.append(str(item.get("effectiveStartDate", "")))
        price = _per_unit(item)
        if meter == f"{tier_word} {redundancy} Data Stored":
            stored.setdefault(class_id, []).append((Decimal(str(item.get("tierMinimumUnits", 0))), price))
        elif meter.endswith("Write Operations") and (redundancy in meter or tier_word + " Write" in meter):
            draft.set(class_id, "requests.write_per_1k", price * 1000)
        elif class_id == "ARCHIVE" and "Priority" in meter and meter.endswith("Read Operations"):
            draft.set(class_id, "restore.expedited.per_1k_requests", price * 1000)
        elif class_id == "ARCHIVE" and "Priority" in meter and meter.endswith("Data Retrieval"):
            draft.set(class_id, "restore.expedited.per_gib", price)
        elif meter.endswith("Read Operations") and "Iterative" not in meter:
            if class_id == "ARCHIVE":
                draft.set(class_id, "restore.standard.per_1k_requests", price * 1000)
            else:
                draft.set(class_id, "requests.read_per_1k", price * 1000)
        elif meter.endswith("Data Retrieval"):
            draft.set(class_id, "restore.standard.per_gib" if class_id == "ARCHIVE" else "retrieval_per_gib", price)
    for class_id, tiers in stored.items():
        tiers.sort()
        ranges = [(lo, tiers[i + 1][0] if i + 1 < len(tiers) else None, p) for i, (lo, p) in enumerate(tiers)]
        draft.set(class_id, "storage", _bands(ranges))
    egress = sorted((Decimal(str(i.get("tierMinimumUnits", 0))), _per_unit(i)) for i in items
                    if i.get("serviceName") == "Bandwidth" and "Data Transfer Out" in str(i.get("meterName", ""))
                    and i.get("armRegionName") in (region, None, ""))
    if egress:
        draft.egress = _bands([(lo, egress[i + 1][0] if i + 1 < len(egress) else None, p)
                               for i, (lo, p) in enumerate(egress)])
    for class_id, found in draft.classes.items():
        # moving a blob to a tier (Set Blob Tier) is billed as a write operation of the target tier
        if class_id != "HOT" and "write_per_1k" in found.get("requests", {}):
            found["transition_per_1k"] = found["requests"]["write_per_1k"]
    if "ARCHIVE" in draft.classes and "HOT" not in draft.classes:
        draft.classes["ARCHIVE"]["restored_copy_class"] = None
    dated = [s for s in starts if s]
    when = valid_from or (_parse_date(max(dated)) if dated else None)
    if when is None:
        raise Invalid("the prices carry no effectiveStartDate; give valid_from")
    meta = {"id": catalog_id or _catalog_id("azure", region, when), "provider": "azure", "region": region,
            "currency": "USD", "valid_from": when,
            "source": [f"Azure Retail Prices API, Storage / Blob, {region}, {redundancy}"],
            "notes": f"Imported from the Azure Retail Prices API ({redundancy}); tier rules from the Blob docs."}
    return draft.build(meta, _AZURE_RULES, {k: f"{v} ({redundancy})" for k, v in _AZURE_NAMES.items()})
