"""The price catalogs shipped in the repository (one YAML file per provider/region/date)."""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from tierpilot.kit.errors import Invalid, NotFound
from tierpilot.pricing.schemas import Catalog

CATALOG_DIR = Path(__file__).resolve().parent / "catalogs"


MAX_YAML_VALUES = 200_000  # far above any real catalog; bounds the work a document can ask for


class _BoundedLoader(yaml.SafeLoader):
    """SafeLoader that counts every value as it will be expanded, each alias as the whole subtree it names, and
    refuses a document past MAX_YAML_VALUES: a few aliased lines otherwise expand to gigabytes."""

    def __init__(self, stream: Any) -> None:
        super().__init__(stream)
        self.expanded = 0
        self.sizes: dict[int, int] = {}

    def _spend(self, n: int, mark: Any) -> None:
        self.expanded += n
        if self.expanded > MAX_YAML_VALUES:
            raise yaml.composer.ComposerError(
                None, None, f"the document expands to more than {MAX_YAML_VALUES} values (an alias counts as "
                "every value it names, each time it is used)", mark)

    def compose_node(self, parent: Any, index: Any) -> Any:
        event = self.peek_event()
        if isinstance(event, yaml.AliasEvent):
            named = self.anchors.get(event.anchor)
            self._spend(self.sizes.get(id(named), 1), event.start_mark)
            return super().compose_node(parent, index)
        before = self.expanded
        self._spend(1, event.start_mark)
        node = super().compose_node(parent, index)
        self.sizes[id(node)] = self.expanded - before
        return node


def parse_catalog(text: str | bytes) -> Catalog:
    """A catalog from YAML (or JSON, which is YAML) text, or Invalid with the schema's complaints."""
    try:
        data = yaml.load(text, Loader=_BoundedLoader)  # noqa: S506 - a SafeLoader with a bound
    except yaml.YAMLError as exc:
        raise Invalid(f"catalog is not valid YAML/JSON: {exc}") from exc
    return validate_catalog(data)


def validate_catalog(data: Any) -> Catalog:
    if not isinstance(data, dict):
        raise Invalid("a catalog is a mapping with id, provider, region, valid_from, source, egress, classes")
    try:
        return Catalog.model_validate(data)
    except ValidationError as exc:
        raise Invalid(f"catalog is invalid: {_first_errors(exc)}", errors=exc.errors(include_url=False)) from exc


def _first_errors(exc: ValidationError, limit: int = 5) -> str:
    parts = []
    for err in exc.errors()[:limit]:
        loc = ".".join(str(p) for p in err["loc"])
        parts.append(f"{loc}: {err['msg']}" if loc else err["msg"])
    return "; ".join(parts)


def load_catalog_file(path: Path) -> Catalog:
    catalog = parse_catalog(path.read_text(encoding="utf-8"))
    if catalog.id != path.stem:
        raise Invalid(f"{path.name}: catalog id {catalog.id!r} differs from the file name")
    return catalog


@lru_cache(maxsize=1)
def shipped_catalogs() -> dict[str, Catalog]:
    """Every catalog file of the repository, by id (read and validated once per process)."""
    return {c.id: c for c in (load_catalog_file(p) for p in sorted(CATALOG_DIR.glob("*.yaml")))}


def resolve_catalog_id(catalog_id: str, catalogs: Mapping[str, Catalog]) -> str:
    """An exact id, or the newest catalog of `provider-region` when the date is left out."""
    if catalog_id in catalogs:
        return catalog_id
    dated = [c for c in catalogs.values() if c.id.startswith(catalog_id + "-") and c.id[len(catalog_id) + 1:].isdigit()]
    if not dated:
        raise NotFound(f"no price catalog {catalog_id!r}; known: {', '.join(sorted(catalogs))}")
    return max(dated, key=lambda c: (c.valid_from, c.id)).id


def find_catalog(catalogs: Mapping[str, Catalog], catalog_id: str) -> Catalog | None:
    """The catalog an id names (undated: the newest), None when it names none."""
    try:
        return catalogs[resolve_catalog_id(catalog_id, catalogs)] if catalog_id else None
    except NotFound:
        return None
