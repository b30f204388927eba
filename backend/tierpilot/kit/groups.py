"""The group -> project mapping of institutional sign-in, as a setting holds it (pure: no table, no domain)."""

from __future__ import annotations

import json
from dataclasses import dataclass

ROLES = ("viewer", "member", "manager")  # the projects domain's roles, weakest first
MAX_GROUPS = 10_000


@dataclass(frozen=True)
class Grant:
    project: str
    role: str


def parse_group_mapping(text: str) -> dict[str, Grant]:
    """``{"group": {"project": "p1", "role": "member"}}`` as grants by group; ValueError naming what is wrong."""
    if not text.strip():
        return {}
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"group_mapping is not JSON: {exc}") from None
    if not isinstance(raw, dict):
        raise ValueError("group_mapping must be a JSON object of group -> {project, role}")
    if len(raw) > MAX_GROUPS:
        raise ValueError(f"group_mapping names more than {MAX_GROUPS} groups")
    out: dict[str, Grant] = {}
    for group, entry in raw.items():
        if not isinstance(entry, dict) or not isinstance(entry.get("project"), str) or not entry["project"]:
            raise ValueError(f"group_mapping[{group!r}] must be an object with a 'project' name")
        role = entry.get("role", "member")
        if role not in ROLES:
            raise ValueError(f"group_mapping[{group!r}]: role must be one of {', '.join(ROLES)}, not {role!r}")
        out[group] = Grant(entry["project"], role)
    return out


def desired_roles(mapping: dict[str, Grant], groups: list[str]) -> dict[str, str]:
    """Project -> role the groups give (the strongest where several groups name one project)."""
    out: dict[str, str] = {}
    for group in groups:
        grant = mapping.get(group)
        if grant is None:
            continue
        held = out.get(grant.project)
        if held is None or ROLES.index(grant.role) > ROLES.index(held):
            out[grant.project] = grant.role
    return out
