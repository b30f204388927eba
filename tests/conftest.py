"""Suite-wide fixtures: settings on a scratch data dir, a scratch database (SQLite or PostgreSQL,
chosen by TIERPILOT_TEST_DB), a real Redis, signed-in API clients and a real Celery worker."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
_DATA_DIR = Path(tempfile.mkdtemp(prefix="tierpilot-test-data-"))
# before any tierpilot import caches the settings
os.environ["TIERPILOT_DATA_DIR"] = str(_DATA_DIR)
# tests put posix tiers in their own temporary folders as well as the data directory's tiers/
os.environ["TIERPILOT_TIER_ROOTS"] = f"{_DATA_DIR / 'tiers'},{Path(tempfile.gettempdir()).resolve()}"
os.environ.setdefault("TIERPILOT_SECRET_KEY", "test-secret-key")
os.environ["TIERPILOT_SEED_DEMO"] = "false"
for _var in ("TIERPILOT_DATABASE_URL", "TIERPILOT_REDIS_URL", "TIERPILOT_BOOTSTRAP_ADMIN"):
    os.environ.pop(_var, None)

from fastapi.testclient import TestClient  # noqa: E402
from sqlalchemy import text  # noqa: E402
from sqlalchemy.engine import make_url  # noqa: E402
from sqlalchemy.exc import OperationalError  # noqa: E402
from sqlalchemy.orm import Session  # noqa: E402

from tests.servers import Server, create_database, start_postgres, start_redis  # noqa: E402
from tierpilot.app.models import Base  # noqa: E402
from tierpilot.kit import db as kitdb  # noqa: E402
from tierpilot.kit.migrate import upgrade  # noqa: E402

TEST_DB = os.environ.get("TIERPILOT_TEST_DB", "sqlite")
ADMIN_PASSWORD = "admin-password-1"
MEMBER_PASSWORD = "member-password-1"


def pytest_report_header(config: pytest.Config) -> str:
    return f"tierpilot test database: {TEST_DB}"


# fixtures through which a test reaches the database under test
_DATABASE_FIXTURES = frozenset({"db_url", "postgres_server"})


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """On the PostgreSQL run, leave out the tests that never reach the database under test: they ran, with
    the same result, on the SQLite run (CI runs both). TIERPILOT_TEST_ALL=1 keeps them."""
    if TEST_DB != "postgresql" or os.environ.get("TIERPILOT_TEST_ALL") == "1":
        return
    kept: list[pytest.Item] = []
    left_out: list[pytest.Item] = []
    for item in items:
        fixtures = set(getattr(item, "fixturenames", ()))
        (kept if fixtures & _DATABASE_FIXTURES else left_out).append(item)
    if left_out:
        config.hook.pytest_deselected(items=left_out)
        items[:] = kept


@pytest.fixture(scope="session")
def data_dir() -> Iterator[Path]:
    yield _DATA_DIR
    shutil.rmtree(_DATA_DIR, ignore_errors=True)


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[Server]:
    server = start_postgres()
    yield server
    server.stop()


@pytest.fixture(scope="session")
def redis_server() -> Iterator[Server]:
    server = start_redis()
    yield server
    server.stop()


@pytest.fixture(scope="session")
def redis_url(redis_server: Server) -> str:
    """A Redis database of the test server, flushed before the suite uses it."""
    import redis

    base = make_url(redis_server.url.replace("redis://", "postgresql://", 1))
    db_index = 11
    url = f"redis://{base.host}:{base.port}/{db_index}"
    redis.Redis.from_url(url).flushdb()
    return url


def _scratch_database(request: pytest.FixtureRequest) -> Iterator[str]:
    if TEST_DB == "sqlite":
        path = _DATA_DIR / f"scratch-{uuid.uuid4().hex[:8]}.db"
        yield f"sqlite:///{path}"
        return
    if TEST_DB != "postgresql":
        raise pytest.UsageError("TIERPILOT_TEST_DB must be sqlite or postgresql")
    server: Server = request.getfixturevalue("postgres_server")
    url, drop = create_database(server.url, "tierpilot_test")
    yield url
    drop()


@pytest.fixture(scope="session")
def db_url(request: pytest.FixtureRequest) -> Iterator[str]:
    """A scratch database built by `alembic upgrade head`; the process's engine points at it."""
    gen = _scratch_database(request)
    url = next(gen)
    upgrade(url)
    os.environ["TIERPILOT_DATABASE_URL"] = url
    from tierpilot.kit.settings import get_settings

    get_settings.cache_clear()
    engine = kitdb.make_engine(url)
    kitdb.set_engine(engine)
    yield url
    kitdb.set_engine(None)
    engine.dispose()
    next(gen, None)


def _other_sessions() -> list[tuple[object, ...]]:
    """The test database's other PostgreSQL sessions: who holds what a teardown waits on."""
    with kitdb.get_engine().connect() as conn:
        return [tuple(r) for r in conn.execute(text(
            "SELECT pid, application_name, client_port, state, xact_start, left(query, 200) FROM pg_stat_activity "
            "WHERE datname = current_database() AND pid <> pg_backend_pid()"))]


def _truncate_all() -> None:
    from tierpilot.drivers import registry

    engine = kitdb.get_engine()
    with engine.begin() as conn:
        if conn.dialect.name == "postgresql":  # a leaked transaction fails the teardown at once, naming itself
            conn.exec_driver_sql("SET LOCAL lock_timeout = '30s'")
        try:
            for table in reversed(Base.metadata.sorted_tables):
                conn.execute(table.delete())
        except OperationalError as e:
            raise RuntimeError(f"emptying the tables waited on: {_other_sessions()}") from e
    registry.tiers.invalidate()
    registry.clear()


@pytest.fixture(scope="session", autouse=True)
def _wired() -> None:
    """The hooks every process fills at start (tier directory)."""
    from tierpilot.app import wiring

    wiring.install()


@pytest.fixture(scope="session", autouse=True)
def _cheap_password_hashes() -> Iterator[None]:
    """Argon2id at its smallest cost for the suite's passwords: the default (64 MiB, 3 passes, 4 lanes) costs 0.1 s
    (quiet) to 0.9 s (load 6) per hash or sign-in on 2 cores, and a test signing in an admin and a member pays four.
    The hashes stay argon2id and any process verifies them (the cost is written in the hash)."""
    from argon2 import PasswordHasher

    from tierpilot.auth import service

    cheap = PasswordHasher(time_cost=1, memory_cost=8, parallelism=1)
    saved = service._hasher, service._DUMMY_HASH
    service._hasher, service._DUMMY_HASH = cheap, cheap.hash("tierpilot-dummy-password")
    yield
    service._hasher, service._DUMMY_HASH = saved


@pytest.fixture(autouse=True)
def _fresh_login_limiter() -> None:
    """The login limiter is built again from the test's settings (its counts live in the database or Redis)."""
    from tierpilot.auth.throttle import login_limiter

    login_limiter.cache_clear()


@pytest.fixture
def db(db_url: str) -> Iterator[str]:
    """Committed data visible to other threads and processes; every table emptied afterwards."""
    yield db_url
    _truncate_all()


@pytest.fixture
def session(db_url: str) -> Iterator[Session]:
    """A session inside a transaction rolled back at the end (services' flushes become savepoints)."""
    engine = kitdb.get_engine()
    conn = engine.connect()
    outer = conn.begin()
    sess = Session(bind=conn, join_transaction_mode="create_savepoint", expire_on_commit=False)
    yield sess
    sess.close()
    outer.rollback()
    conn.close()


def make_user(username: str, password: str, is_admin: bool = False) -> dict[str, str]:
    from tierpilot.auth import service
    from tierpilot.kit.db import transaction

    with transaction(write=True) as s:
        user, key = service.create_user(s, username, password, is_admin=is_admin)
        return {"id": str(user.id), "username": username, "password": password,
                "access_key_id": key.access_key_id, "secret_access_key": key.secret_access_key}


def login(client: TestClient, username: str, password: str) -> TestClient:
    r = client.post("/api/auth/login", json={"username": username, "password": password})
    assert r.status_code == 200, r.text
    client.headers["X-CSRF-Token"] = client.cookies["tierpilot_csrf"]
    return client


@pytest.fixture
def app_client(db: str) -> Iterator[TestClient]:
    """An anonymous client of the real API app on the scratch database."""
    from tierpilot.app.api import create_app

    with TestClient(create_app(), base_url="http://127.0.0.1") as c:
        yield c


@pytest.fixture
def admin_user(db: str) -> dict[str, str]:
    return make_user("admin", ADMIN_PASSWORD, is_admin=True)


@pytest.fixture
def member_user(db: str) -> dict[str, str]:
    return make_user("member", MEMBER_PASSWORD)


@pytest.fixture
def client(app_client: TestClient, admin_user: dict[str, str]) -> TestClient:
    """The API signed in as an admin."""
    return login(app_client, admin_user["username"], admin_user["password"])


@pytest.fixture
def member_client(db: str, member_user: dict[str, str]) -> Iterator[TestClient]:
    """The API signed in as a member (a separate cookie jar from `client`)."""
    from tierpilot.app.api import create_app

    with TestClient(create_app(), base_url="http://127.0.0.1") as c:
        yield login(c, member_user["username"], member_user["password"])


@pytest.fixture(scope="session")
def celery_worker_process(db_url: str, redis_url: str) -> Iterator[subprocess.Popen[bytes]]:
    """A real `tierpilot worker` process on the test broker and database."""
    env = dict(os.environ, TIERPILOT_REDIS_URL=redis_url, TIERPILOT_DATABASE_URL=db_url)
    log = open(_DATA_DIR / "worker.log", "wb")  # noqa: SIM115
    proc = subprocess.Popen([sys.executable, "-m", "tierpilot.app.cli", "worker", "--concurrency", "2"],
                            env=env, stdout=log, stderr=subprocess.STDOUT, cwd=ROOT)
    yield proc
    proc.terminate()
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
    log.close()
