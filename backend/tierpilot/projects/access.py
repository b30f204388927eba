"""Project roles as the gateway reads them: cached per process under the members generation, which every change
that takes access away moves before it is answered (as sharing states are cached)."""

from __future__ import annotations

from tierpilot.kit import generations
from tierpilot.kit.db import transaction
from tierpilot.kit.settings import get_settings
from tierpilot.kit.streaming import run
from tierpilot.projects import repository
from tierpilot.projects.service import MEMBERS_GENERATION

# (project id, user id) -> role ("" for none: a non-member's requests are not read again within the TTL)
roles: generations.GenerationCache[tuple[int, int], str] = generations.GenerationCache(
    MEMBERS_GENERATION, get_settings().gateway_cache_s)


def _load(project_id: int, user_id: int) -> str:
    with transaction() as session:
        return repository.role_of(session, project_id, user_id) or ""


async def role_for(project_id: int | None, user_id: int, seen: generations.Seen | None = None) -> str | None:
    """The user's role in the project (None: not a member, or no project)."""
    if project_id is None or user_id <= 0:
        return None
    generation = await roles.generation(seen)
    role = roles.get((project_id, user_id), generation)
    if role is None:
        role = await run(_load, project_id, user_id)
        roles.put((project_id, user_id), role, generation)
    return role or None
