"""A catalog's YAML is bounded as it will be expanded: a few lines of aliases name gigabytes (an "alias bomb")."""

from __future__ import annotations

import pytest

from tierpilot.kit.errors import Invalid
from tierpilot.pricing.catalogs import parse_catalog


def _bomb(levels: int) -> str:
    lines = ['a0: &a0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for i in range(1, levels):
        lines.append(f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]")
    return "\n".join(lines) + "\n"


@pytest.mark.timeout(20)
def test_an_alias_bomb_is_refused_before_it_expands() -> None:
    with pytest.raises(Invalid) as err:
        parse_catalog(_bomb(9))  # 9**9 values once expanded
    assert "alias" in err.value.message


def test_a_few_aliases_are_fine() -> None:
    with pytest.raises(Invalid) as err:
        parse_catalog(_bomb(3))
    assert "catalog is invalid" in err.value.message


def test_a_plain_catalog_still_parses() -> None:
    with pytest.raises(Invalid) as err:
        parse_catalog("id: x\n")
    assert "catalog is invalid" in err.value.message
