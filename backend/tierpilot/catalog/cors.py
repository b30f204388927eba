"""A bucket's CORS rules (``buckets.cors``): their model, the checks S3 makes, and matching a browser request.

The gateway reads and writes them as S3's CORSConfiguration XML (``gateway/ops_cors.py``) and answers
preflights from them; the dashboard edits the same rules as JSON (``PUT /api/buckets/{name}/cors``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy.orm import Session

from tierpilot.catalog import repository
from tierpilot.catalog.errors import InvalidInput, NoSuchBucket

METHODS = ("GET", "PUT", "POST", "DELETE", "HEAD")
MAX_RULES = 100
MAX_ID_CHARS = 255


@dataclass(frozen=True)
class Rule:
    origins: tuple[str, ...]
    methods: tuple[str, ...]
    headers: tuple[str, ...] = ()
    expose: tuple[str, ...] = ()
    max_age: int | None = None
    id: str | None = None

    @classmethod
    def load(cls, stored: dict[str, Any]) -> Rule:
        return cls(tuple(stored["origins"]), tuple(stored["methods"]), tuple(stored.get("headers", ())),
                   tuple(stored.get("expose", ())), stored.get("max_age"), stored.get("id"))

    def dump(self) -> dict[str, Any]:
        out: dict[str, Any] = {"origins": list(self.origins), "methods": list(self.methods)}
        if self.headers:
            out["headers"] = list(self.headers)
        if self.expose:
            out["expose"] = list(self.expose)
        if self.max_age is not None:
            out["max_age"] = self.max_age
        if self.id is not None:
            out["id"] = self.id
        return out


def validate(rules: list[Rule]) -> None:
    """S3's checks: 1–100 rules, each with origins and methods of GET/PUT/POST/DELETE/HEAD, at most one ``*``
    per origin or header pattern (InvalidInput naming the rule and field; MalformedXML or InvalidRequest)."""
    if not rules or len(rules) > MAX_RULES:
        raise InvalidInput(f"rules: a CORS configuration has 1 to {MAX_RULES} rules", "MalformedXML")
    for i, rule in enumerate(rules):
        where = f"rules[{i}]"
        if not rule.methods or not rule.origins:
            raise InvalidInput(f"{where}: a rule needs at least one allowed method and one allowed origin",
                               "MalformedXML")
        for method in rule.methods:
            if method not in METHODS:
                raise InvalidInput(f"{where}.methods: Found unsupported HTTP method in CORS config. Unsupported "
                                   f"method is {method}", "InvalidRequest")
        for name, patterns in (("origins", rule.origins), ("headers", rule.headers)):
            for pattern in patterns:
                if not pattern or pattern.count("*") > 1:
                    raise InvalidInput(f'{where}.{name}: "{pattern}" must be non-empty with at most one wildcard',
                                       "InvalidRequest")
        if rule.max_age is not None and rule.max_age < 0:
            raise InvalidInput(f"{where}.max_age: must be a number of seconds", "MalformedXML")
        if rule.id is not None and len(rule.id) > MAX_ID_CHARS:
            raise InvalidInput(f"{where}.id: at most {MAX_ID_CHARS} characters", "InvalidRequest")


def set_rules(session: Session, bucket_id: int, rules: list[Rule] | None) -> None:
    """Put (validated) or delete (None) a bucket's CORS configuration."""
    if rules is not None:
        validate(rules)
    if not repository.bucket_exists(session, bucket_id):
        raise NoSuchBucket("The specified bucket does not exist")
    repository.set_bucket_settings(session, bucket_id, cors=[r.dump() for r in rules] if rules is not None else None)


def rules_of(stored: list[Any] | None) -> list[Rule] | None:
    return [Rule.load(r) for r in stored] if stored is not None else None


def wildcard_match(pattern: str, value: str) -> bool:
    """S3's CORS patterns: at most one ``*``, standing for any run of characters (also none)."""
    if "*" not in pattern:
        return pattern == value
    head, _, tail = pattern.partition("*")
    return len(value) >= len(head) + len(tail) and value.startswith(head) and value.endswith(tail)


def find_rule(rules: list[Rule], origin: str, method: str, request_headers: list[str]) -> Rule | None:
    """The first rule allowing ``origin``, ``method`` and every requested header (headers: any case)."""
    for rule in rules:
        if method not in rule.methods or not any(wildcard_match(o, origin) for o in rule.origins):
            continue
        if all(any(wildcard_match(p.lower(), h.lower()) for p in rule.headers) for h in request_headers):
            return rule
    return None
