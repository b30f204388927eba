"""The projects domain's gateway hooks (listed in ``wiring.GATEWAY_EXTENSIONS``): every write reserves its
declared size against its project's hard quota before its body is read (``quota``), and a background loop keeps
the counters true to the catalog and tells managers of soft thresholds.

A write refused is ``403 QuotaExceeded`` (as Ceph RGW answers); a counter out of reach ``503 SlowDown``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging

from tierpilot.catalog import repository as catalog_repository
from tierpilot.gateway.ext import S3Error
from tierpilot.kit import flow as kitflow
from tierpilot.kit.cache import TTLCache
from tierpilot.kit.db import transaction
from tierpilot.kit.flow import Flow, FlowRequest
from tierpilot.kit.settings import get_settings
from tierpilot.kit.streaming import run
from tierpilot.projects import access, quota, repository, service
from tierpilot.projects.quota import CounterUnavailable, Limits, QuotaRefused

log = logging.getLogger(__name__)

SWEEP_S = 10.0  # how often a gateway reconciles the counters and checks soft thresholds
STEP_BYTES = 8 << 20  # a body longer than it declared (or declaring nothing) reserves more in steps this large
_NONE = 0  # cached "no project" / "no quota" (ids begin at 1)

_projects: TTLCache[int, int] = TTLCache(get_settings().gateway_cache_s)  # bucket id -> project id
_limits: TTLCache[int, Limits] = TTLCache(get_settings().gateway_cache_s)  # project id -> its quotas
_loop: asyncio.Task[None] | None = None


def _load(bucket_id: int) -> tuple[int, Limits]:
    with transaction() as session:
        project_id = catalog_repository.bucket_project(session, bucket_id)
        project = repository.get(session, project_id) if project_id is not None else None
        if project is None:
            return _NONE, Limits(None, None)
        return project.id, Limits(project.quota_bytes, project.quota_objects)


async def limits_of(bucket_id: int) -> tuple[int, Limits] | None:
    """The bucket's project and its quotas (cached for ``TIERPILOT_GATEWAY_CACHE_S``), None when unlimited."""
    project_id = _projects.get(bucket_id)
    limits = _limits.get(project_id) if project_id else None
    if project_id is None or (project_id and limits is None):
        found, loaded = await run(_load, bucket_id)
        _projects.put(bucket_id, found)
        if found:
            _limits.put(found, loaded)
        project_id, limits = found, loaded
    if not project_id or limits is None or not limits.any:
        return None
    return project_id, limits


def quota_exceeded(exc: QuotaRefused) -> S3Error:
    return S3Error("QuotaExceeded", f"The project's {exc.what} quota of {exc.quota} would be exceeded "
                   f"({exc.used} in use or in flight).", 403)


def slow_down(exc: CounterUnavailable) -> S3Error:
    log.warning("quota counter unreachable, write refused: %s", exc)
    err = S3Error("SlowDown", "The quota counter is unavailable for a moment. Please try again.", 503)
    err.headers.append((b"retry-after", b"1"))
    return err


async def reserve(project_id: int, limits: Limits, nbytes: int, objects: int) -> None:
    try:
        await quota.counter().reserve(project_id, limits, nbytes, objects)
    except QuotaRefused as exc:
        raise quota_exceeded(exc) from None
    except CounterUnavailable as exc:
        raise slow_down(exc) from None


class QuotaFlow:
    """A write's flow holding its reservation until the request ends."""

    __slots__ = ("_flow", "_project", "_limits", "_reserved", "_objects", "_moved", "headers")

    def __init__(self, flow: Flow, project_id: int, limits: Limits, reserved: int) -> None:
        self._flow, self._project, self._limits = flow, project_id, limits
        self._reserved, self._objects, self._moved = reserved, 1, 0
        self.headers = flow.headers

    async def consume(self, nbytes: int) -> None:
        self._moved += nbytes
        if self._moved > self._reserved:  # more than it declared: a step more, one counter call per step
            more = max(STEP_BYTES, self._moved - self._reserved)
            await reserve(self._project, self._limits, more, 0)
            self._reserved += more
        await self._flow.consume(nbytes)

    async def close(self) -> None:
        try:
            await self._flow.close()
        finally:
            reserved, objects, self._reserved, self._objects = self._reserved, self._objects, 0, 0
            if reserved or objects:
                try:
                    await quota.counter().release(self._project, reserved, objects)
                except Exception:  # noqa: BLE001  (kept until the process's reservations are reconciled)
                    log.warning("could not release a quota reservation of %d bytes", reserved, exc_info=True)


class QuotaPolicy:
    """Wraps the installed flow policy: writes to a bucket of a project with a quota reserve first."""

    def __init__(self, inner: kitflow.FlowPolicy) -> None:
        self.inner = inner

    async def open(self, request: FlowRequest) -> Flow:
        if request.direction != "write":
            return await self.inner.open(request)
        found = await limits_of(request.bucket_id)
        if found is None:
            return await self.inner.open(request)
        project_id, limits = found
        declared = request.expected_bytes or 0
        await reserve(project_id, limits, declared, 1)
        try:
            flow = await self.inner.open(request)
        except BaseException:
            with contextlib.suppress(Exception):
                await quota.counter().release(project_id, declared, 1)
            raise
        return QuotaFlow(flow, project_id, limits, declared)


def _sweep() -> None:
    with transaction(write=True) as session:
        ids = service.sweep(session)
    for project_id in ids:
        quota.reconcile_one(project_id)


async def _sweep_forever() -> None:
    while True:
        try:
            await quota.counter().heartbeat()
            await run(_sweep)
        except Exception:
            log.warning("could not reconcile the quota counters", exc_info=True)
        await asyncio.sleep(SWEEP_S)


async def startup() -> None:
    global _loop
    access.roles.start(get_settings().redis_url)
    if not isinstance(kitflow.get_policy(), QuotaPolicy):
        kitflow.set_policy(QuotaPolicy(kitflow.get_policy()))
    _loop = asyncio.ensure_future(_sweep_forever())


async def shutdown() -> None:
    global _loop
    if _loop is not None:
        _loop.cancel()
        with contextlib.suppress(BaseException):
            await _loop
        _loop = None
    policy = kitflow.get_policy()
    if isinstance(policy, QuotaPolicy):
        kitflow.set_policy(policy.inner)
    await access.roles.stop()
    await quota.counter().close()


def health() -> dict[str, str]:
    return {"quota_counter": "redis" if get_settings().redis_url else "database"}
