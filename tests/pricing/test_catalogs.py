from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from tierpilot.kit.errors import Invalid
from tierpilot.pricing.catalogs import CATALOG_DIR, load_catalog_file, parse_catalog, shipped_catalogs

FILES = sorted(CATALOG_DIR.glob("*.yaml"))


def test_the_catalogs_the_issue_asks_for_are_shipped() -> None:
    ids = set(shipped_catalogs())
    assert {"aws-ap-northeast-1-2018", "aws-ap-northeast-1-2026", "aws-us-east-1-2026", "gcp-us-central1-2026",
            "azure-eastus-2026", "oracle-us-ashburn-1-2026", "onprem-example-2026"} <= ids
    providers = {c.provider for c in shipped_catalogs().values()}
    assert providers == {"aws", "gcp", "azure", "oracle", "onprem"}


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_every_shipped_catalog_validates_and_says_where_it_comes_from(path: Path) -> None:
    catalog = load_catalog_file(path)
    assert catalog.id == path.stem
    assert catalog.currency == "USD" and catalog.source and catalog.region
    # a source is what a reader can look up (a name or an address), never a path of our own price notes
    assert not any("PRICES.md" in src or "../" in src or "shared/" in src for src in catalog.source), catalog.source
    assert str(catalog.valid_from.year) == catalog.id.rsplit("-", 1)[1]
    for cls in catalog.classes:
        assert cls.storage, cls.id
        if cls.restore:
            assert cls.min_storage_days > 0 or catalog.provider == "onprem", cls.id
            for speed in cls.restore.values():
                assert speed.max_hours > 0


def test_figures_prices_md_calls_unverified_are_marked_as_estimates() -> None:
    tokyo_2018 = shipped_catalogs()["aws-ap-northeast-1-2018"]
    ia = tokyo_2018.storage_class("STANDARD_IA")
    assert {"requests", "retrieval_per_gib"} <= set(ia.estimated)
    assert "restore" in tokyo_2018.storage_class("GLACIER").estimated
    assert "egress.internet" in tokyo_2018.estimated
    gcp = shipped_catalogs()["gcp-us-central1-2026"]
    assert "requests" in gcp.storage_class("COLDLINE").estimated
    assert "requests" not in gcp.storage_class("STANDARD").estimated
    onprem = shipped_catalogs()["onprem-example-2026"]
    assert "classes" in onprem.estimated


def test_case_study_prices_are_the_2018_tokyo_figures() -> None:
    c = shipped_catalogs()["aws-ap-northeast-1-2018"]
    assert [str(b.price) for b in c.storage_class("STANDARD").storage] == ["0.025", "0.024", "0.023"]
    assert str(c.storage_class("STANDARD").requests.write_per_1k) == "0.0047"
    glacier = c.storage_class("GLACIER")
    assert str(glacier.storage[0].price) == "0.005"
    assert glacier.min_storage_days == 90
    assert sorted(o.bytes for o in glacier.object_overhead) == [8192, 32768]
    assert str(glacier.restore["bulk"].per_gib) == "0.00275"


def test_current_prices_issue_17_asked_to_recheck_are_the_dated_ones() -> None:
    catalogs = shipped_catalogs()
    tokyo = catalogs["aws-ap-northeast-1-2026"].storage_class("STANDARD_IA")
    assert str(tokyo.storage[0].price) == "0.0138"  # 2018's 0.019 was still there
    for gcp in ("gcp-us-central1-2026", "gcp-asia-northeast1-2026"):
        bands = catalogs[gcp].egress_bands("internet")
        assert [(b.up_to_gib, str(b.price)) for b in bands] == [(1024, "0.12"), (10240, "0.11"), (None, "0.08")]
    # an Oracle Archive restore takes up to about an hour now (4 h in 2018)
    oracle = catalogs["oracle-us-ashburn-1-2026"].storage_class("ARCHIVE").restore["standard"]
    assert oracle.typical_hours == oracle.max_hours == 1


def test_onprem_storage_price_is_derived_from_its_cost_parts() -> None:
    disk = shipped_catalogs()["onprem-example-2026"].storage_class("DISK")
    assert disk.cost_per_tib_month is not None
    assert disk.storage[0].price * 1024 == disk.cost_per_tib_month.per_tib_month


def _minimal() -> dict[str, Any]:
    return yaml.safe_load((CATALOG_DIR / "aws-ap-northeast-1-2018.yaml").read_text())


@pytest.mark.parametrize(("change", "message"), [
    (lambda c: c["classes"][0].update(storage=[{"up_to_gib": 100, "price": 1}, {"up_to_gib": 50, "price": 1},
                                               {"price": 1}]), "band limits must increase"),
    (lambda c: c["classes"][0].update(storage=[{"up_to_gib": 100, "price": 1}]), "only the last band"),
    (lambda c: c["classes"][0].update(storage=[{"price": -1}]), "greater than or equal to 0"),
    (lambda c: c["egress"].pop("research-network"), "egress prices missing for research-network"),
    (lambda c: c["classes"][3].update(restored_copy_class="NOPE"), "unknown class 'NOPE'"),
    (lambda c: c["classes"][3]["restore"]["bulk"].update(typical_hours=20), "typical_hours exceeds max_hours"),
    (lambda c: c["classes"][1].update(estimated=["retrival_per_gib"]), "unknown field"),
    (lambda c: c["classes"].append(dict(c["classes"][0])), "duplicate class ids"),
    (lambda c: c.update(id="Not An Id"), "should match pattern"),
    (lambda c: c.update(currency="EUR"), "Input should be 'USD'"),
    (lambda c: c.pop("source"), "source"),
    (lambda c: c["classes"][0].update(surprise=1), "Extra inputs are not permitted"),
])
def test_invalid_catalogs_are_refused_with_the_reason(change: Any, message: str) -> None:
    data = _minimal()
    change(data)
    with pytest.raises(Invalid, match=message):
        parse_catalog(yaml.safe_dump(data))


def test_catalog_text_that_is_not_yaml_is_refused() -> None:
    with pytest.raises(Invalid, match="not valid YAML"):
        parse_catalog("id: [unclosed")
    with pytest.raises(Invalid, match="is a mapping"):
        parse_catalog("- a list")


def test_catalog_file_name_must_match_its_id(tmp_path: Path) -> None:
    path = tmp_path / "aws-other-2018.yaml"
    path.write_text((CATALOG_DIR / "aws-ap-northeast-1-2018.yaml").read_text())
    with pytest.raises(Invalid, match="differs from the file name"):
        load_catalog_file(path)
