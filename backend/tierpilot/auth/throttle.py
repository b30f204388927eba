"""Login throttling that slows guessing without letting anyone lock a user out.

Every attempt is counted before its password is checked (and taken back when it was right), in counters
every API process shares (``kit.counters``: Redis, else the database), so neither parallel requests nor
several API processes get more tries than one. Three limits, each keyed so it hurts only its cause:

* **account + address**: ``login_free_attempts`` failures, then each try waits 1 s after the previous
  one, doubled per further failure, up to ``login_backoff_max_s``. Someone guessing alice's password
  from one address slows only that address's tries at alice.
* **address** (an IPv6 /64 counts as one): ``login_address_failures`` failures in a window, any
  accounts; then that address waits for the window to end (one host trying many accounts).
* **account, all addresses**: past ``login_account_failures`` failures in a window (many addresses
  guessing one password), an address the account has not signed in from in 30 days gets one try at
  once and then waits, from 2 s doubling per further multiple of the ceiling. Addresses the account
  signed in from keep their allowance, so the owner still gets in, and a new one is slowed, not locked.

A single address can never push an account past its ceiling: refused tries are not counted, and the
address limit stops it first. Addresses are what ``kit.proxies`` makes of the peer and trusted proxies.
"""

from __future__ import annotations

import hashlib
import ipaddress
import math
from dataclasses import dataclass
from functools import lru_cache

from tierpilot.kit.counters import Seen, SharedCounters, Tally
from tierpilot.kit.errors import TooManyRequests
from tierpilot.kit.settings import Settings, get_settings

BACKOFF_S = 1.0
KNOWN_ADDRESS_S = 30 * 86400.0  # an address the account signed in from is trusted this long
MAX_DOUBLINGS = 30


def address_unit(host: str) -> str:
    """What an address is limited as: an IPv4 address, or its /64 for IPv6 (one host's usual allocation)."""
    try:
        addr = ipaddress.ip_address(host)
    except ValueError:
        return host[:64]
    if addr.version == 6:
        return str(ipaddress.ip_network(f"{addr}/64", strict=False))
    return str(addr)


@dataclass(frozen=True)
class LoginKeys:
    address: Tally
    pair: Tally
    account: Tally
    known: Tally


class LoginLimiter:
    """The three limits above over shared counters (whose clock tests may move)."""

    def __init__(self, counters: SharedCounters, settings: Settings) -> None:
        self.counters = counters
        self.window_s = settings.login_window_s
        self.free_attempts = settings.login_free_attempts
        self.backoff_max_s = settings.login_backoff_max_s
        self.address_failures = settings.login_address_failures
        self.account_failures = settings.login_account_failures

    def keys(self, username: str, address: str) -> LoginKeys:
        account = hashlib.sha256(username.encode("utf-8", "surrogatepass")).hexdigest()[:32]
        unit = address_unit(address)
        return LoginKeys(Tally(f"addr:{unit}", self.window_s), Tally(f"pair:{account}:{unit}", self.window_s),
                         Tally(f"user:{account}", self.window_s), Tally(f"known:{account}:{unit}", KNOWN_ADDRESS_S))

    def wait_s(self, address: Seen, pair: Seen, account: Seen, known: bool, now: float) -> float:
        """How long an attempt must wait (0: it may go), given the failures counted before it."""
        if address.count >= self.address_failures:
            return address.started + self.window_s - now
        free, step = self.free_attempts, BACKOFF_S
        over = account.count // self.account_failures
        if over and not known:
            free, step = 1, BACKOFF_S * 2 ** min(over, MAX_DOUBLINGS)
        if pair.count < free or pair.last is None:
            return 0.0
        delay = min(self.backoff_max_s, step * 2 ** min(pair.count - free, MAX_DOUBLINGS))
        return pair.last + delay - now

    def attempt(self, username: str, address: str) -> LoginAttempt:
        """Count an attempt as failed until ``succeeded``; 429 (with the wait) when it must wait."""
        keys = self.keys(username, address)
        addr, pair, account, known = self.counters.peek(keys.address, keys.pair, keys.account, keys.known)
        self._refuse_if_waiting(addr, pair, account, known.count > 0)
        # counted, then checked again on what was counted before it: parallel tries each see the others
        addr, pair, account = (Seen(s.count - 1, s.started, s.last)
                               for s in self.counters.hit(keys.address, keys.pair, keys.account))
        self._refuse_if_waiting(addr, pair, account, known.count > 0)
        return LoginAttempt(self, keys)

    def _refuse_if_waiting(self, address: Seen, pair: Seen, account: Seen, known: bool) -> None:
        wait = self.wait_s(address, pair, account, known, self.counters.clock())
        if wait > 0:
            raise TooManyRequests("too many failed logins; try again later", retry_after_s=math.ceil(wait))


@dataclass(frozen=True)
class LoginAttempt:
    limiter: LoginLimiter
    keys: LoginKeys

    def succeeded(self) -> None:
        """The password was right: the attempt is no failure, and the address becomes one the account uses."""
        counters = self.limiter.counters
        counters.refund(self.keys.address, self.keys.account)
        counters.forget(self.keys.pair.key)
        counters.hit(self.keys.known)


@lru_cache
def login_limiter() -> LoginLimiter:
    """This process's limiter over the configured Redis (else the database)."""
    settings = get_settings()
    return LoginLimiter(SharedCounters("login", settings.redis_url or None), settings)
