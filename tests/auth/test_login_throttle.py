"""Login throttling through the real API app: it slows guessing and cannot be turned against a user.
Counts live in the suite's database, or its Redis where a test says so; the limiter's clock is moved by
hand (no sleeping)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from tierpilot.auth.throttle import LoginLimiter, login_limiter
from tierpilot.kit.errors import TooManyRequests

ATTACKER = ("198.51.100.7", 40000)
ALICE_HOME = ("192.0.2.10", 40000)


class Clock:
    def __init__(self) -> None:
        self.now = 1_900_000_000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock(db: str) -> Iterator[Clock]:
    clock = Clock()
    login_limiter.cache_clear()
    login_limiter().counters.clock = clock
    yield clock
    login_limiter.cache_clear()


_apps: dict[str, object] = {}


def _client(address: tuple[str, int]) -> TestClient:
    """A client at ``address`` of an API app built on the current settings (one app per set of settings)."""
    from tierpilot.app.api import create_app
    from tierpilot.kit.settings import get_settings

    app = _apps.get(get_settings().trusted_proxies)
    if app is None:
        app = _apps[get_settings().trusted_proxies] = create_app()
    return TestClient(app, base_url="http://127.0.0.1", client=address)  # type: ignore[arg-type]


def _login(client: TestClient, username: str, password: str) -> int:
    return client.post("/api/auth/login", json={"username": username, "password": password}).status_code


def test_hammering_alices_account_from_one_address_cannot_stop_alice(clock: Clock, member_user: dict[str, str]
                                                                     ) -> None:
    attacker, alice = _client(ATTACKER), _client(ALICE_HOME)
    codes = [_login(attacker, "member", f"guess-{i}-xx") for i in range(40)]
    assert codes[:5] == [401] * 5 and set(codes[5:]) == {429}
    assert _login(alice, "member", member_user["password"]) == 200
    # the attacker's right guess waits too: its address is slowed for this account, whatever it sends
    assert _login(attacker, "member", member_user["password"]) == 429


def test_each_further_failure_from_an_address_doubles_its_wait(clock: Clock, member_user: dict[str, str]) -> None:
    attacker = _client(ATTACKER)
    for i in range(5):
        assert _login(attacker, "member", f"guess-{i}-xx") == 401
    waits = []
    for i in range(4):
        r = attacker.post("/api/auth/login", json={"username": "member", "password": f"again-{i}-xx"})
        assert r.status_code == 429
        waits.append(int(r.headers["retry-after"]))
        assert r.json()["retry_after_s"] == waits[-1]
        clock.now += waits[-1]  # waited exactly as told: the next try is checked
        assert _login(attacker, "member", f"after-{i}-xx") == 401
    assert waits == [1, 2, 4, 8]
    clock.now += 300
    assert _login(attacker, "member", member_user["password"]) == 200  # the owner's password still works there


def test_one_address_trying_many_accounts_waits_for_the_next_window(clock: Clock,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TIERPILOT_LOGIN_ADDRESS_FAILURES", "8")
    from tierpilot.kit.settings import get_settings

    get_settings.cache_clear()
    login_limiter.cache_clear()
    login_limiter().counters.clock = clock
    try:
        attacker = _client(ATTACKER)
        codes = [_login(attacker, f"user-{i}", "wrong-password") for i in range(10)]
        assert codes == [401] * 8 + [429] * 2
        assert _login(_client(ALICE_HOME), "user-9", "wrong-password") == 401  # other addresses are not slowed
        clock.now += get_settings().login_window_s
        assert _login(attacker, "user-10", "wrong-password") == 401
    finally:
        monkeypatch.delenv("TIERPILOT_LOGIN_ADDRESS_FAILURES")
        get_settings.cache_clear()


def test_many_addresses_at_one_account_slow_new_addresses_but_not_the_owners(
        clock: Clock, member_user: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TIERPILOT_LOGIN_ACCOUNT_FAILURES", "6")
    from tierpilot.kit.settings import get_settings

    get_settings.cache_clear()
    login_limiter.cache_clear()
    login_limiter().counters.clock = clock
    try:
        assert _login(_client(ALICE_HOME), "member", member_user["password"]) == 200  # her usual address
        for bot in range(3):  # a botnet: each address stays within its own allowance
            client = _client((f"203.0.113.{bot}", 1))
            assert [_login(client, "member", f"bot-{bot}-{i}-x") for i in range(2)] == [401] * 2
        # 6 failures reach the ceiling: a new address gets one try at once, then waits (2 s, doubling per failure)
        newcomer = _client(("192.0.2.77", 1))
        assert _login(newcomer, "member", "typo-password") == 401
        r = newcomer.post("/api/auth/login", json={"username": "member", "password": member_user["password"]})
        assert r.status_code == 429 and r.headers["retry-after"] == "2"
        clock.now += 2
        assert _login(newcomer, "member", member_user["password"]) == 200
        # the owner's usual address keeps its own allowance
        assert _login(_client(ALICE_HOME), "member", "typo-password") == 401
        assert _login(_client(ALICE_HOME), "member", member_user["password"]) == 200
    finally:
        monkeypatch.delenv("TIERPILOT_LOGIN_ACCOUNT_FAILURES")
        get_settings.cache_clear()


def test_forwarded_for_counts_only_from_a_trusted_proxy(clock: Clock, monkeypatch: pytest.MonkeyPatch) -> None:
    from tierpilot.kit.settings import get_settings

    monkeypatch.setenv("TIERPILOT_LOGIN_FREE_ATTEMPTS", "2")
    get_settings.cache_clear()
    login_limiter.cache_clear()
    login_limiter().counters.clock = clock
    untrusted = _client(("10.0.0.2", 1))
    for i in range(3):
        r = untrusted.post("/api/auth/login", json={"username": "x", "password": f"p-{i}-xxxx"},
                           headers={"X-Forwarded-For": f"203.0.113.{i}"})
    assert r.status_code == 429  # the peer's own address: a forged header changes nothing

    monkeypatch.setenv("TIERPILOT_TRUSTED_PROXIES", "10.0.0.0/8")
    get_settings.cache_clear()
    try:
        proxy = _client(("10.0.0.2", 1))
        # the proxy appends the address it saw; what the client wrote to the left is not believed
        codes = [proxy.post("/api/auth/login", json={"username": "x", "password": f"q-{i}-xxxx"},
                            headers={"X-Forwarded-For": f"203.0.113.{i}, 198.51.100.{i}"}).status_code
                 for i in range(3)]
        assert codes == [401] * 3  # three clients behind the proxy, one failure each
        codes = [proxy.post("/api/auth/login", json={"username": "x", "password": f"r-{i}-xxxx"},
                            headers={"X-Forwarded-For": f"203.0.113.{i}, 198.51.100.50"}).status_code
                 for i in range(3)]
        assert codes == [401] * 2 + [429]  # one client, whatever it writes
    finally:
        monkeypatch.delenv("TIERPILOT_TRUSTED_PROXIES")
        monkeypatch.delenv("TIERPILOT_LOGIN_FREE_ATTEMPTS")
        get_settings.cache_clear()


def test_two_api_apps_on_one_redis_count_the_same_failures(db: str, redis_url: str,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    import redis

    from tierpilot.kit.counters import SharedCounters
    from tierpilot.kit.settings import get_settings

    shared = redis_url.rsplit("/", 1)[0] + "/13"
    redis.Redis.from_url(shared).flushdb()
    clock = Clock()
    first, second = (LoginLimiter(SharedCounters("login", shared, clock=clock), get_settings()) for _ in range(2))
    assert first.counters.backend == second.counters.backend == "redis"
    for i in range(5):
        (first if i % 2 else second).attempt("alice", ATTACKER[0])
    with pytest.raises(TooManyRequests):
        first.attempt("alice", ATTACKER[0])
    with pytest.raises(TooManyRequests):
        second.attempt("alice", ATTACKER[0])
    second.attempt("alice", ALICE_HOME[0]).succeeded()
    redis.Redis.from_url(shared).flushdb()
