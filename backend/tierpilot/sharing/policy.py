"""The S3 bucket policy language: parse and validate a document, evaluate it for one request, say it in words.

Pure: no database, no HTTP. ``parse`` refuses what S3 refuses with ``PolicyInvalid`` (the gateway answers
MalformedPolicy, the API 422); ``Policy.evaluate`` answers "deny", "allow" or None (nothing applies), an
explicit deny winning over any allow, as IAM evaluates a resource policy.

``parse_stored`` reads a policy already stored, which this version may no longer accept (written by an older
one, edited in the database), and never raises: it fails closed, statement by statement. An Allow that
cannot be read grants nothing; any other statement that cannot be read becomes a Deny of everything it could
have matched (each unreadable part at its widest: any principal, any action, any resource, no condition) for
everyone but the bucket owner, who keeps access to fix or delete the policy. Statements that can be read,
Denies included, apply as written.
"""

from __future__ import annotations

import ipaddress
import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import lru_cache
from typing import Any, Literal

MAX_POLICY_BYTES = 20 * 1024  # S3's limit for a bucket policy
VERSIONS = ("2012-10-17", "2008-10-17")
Decision = Literal["allow", "deny"] | None


class PolicyInvalid(ValueError):
    """A document S3 would refuse (MalformedPolicy); ``message`` says what is wrong."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


@dataclass(frozen=True)
class Caller:
    """Who asks, as a policy sees it: a tierpilot user (canonical id = user id) or anonymous."""

    user_id: int
    username: str
    anonymous: bool = False


@dataclass
class Context:
    """One request as a policy sees it: action, resource ARN and the condition keys (lower-case names)."""

    action: str  # "s3:GetObject"
    resource: str  # "arn:aws:s3:::bucket" or "arn:aws:s3:::bucket/key"
    keys: dict[str, list[str]] = field(default_factory=dict)


@lru_cache(maxsize=2048)
def _glob(pattern: str, ignore_case: bool) -> re.Pattern[str]:
    """IAM wildcards: ``*`` any run of characters, ``?`` one character, everything else literal."""
    body = "".join(".*" if c == "*" else "." if c == "?" else re.escape(c) for c in pattern)
    return re.compile(f"^{body}$", re.DOTALL | (re.IGNORECASE if ignore_case else 0))


def glob_match(pattern: str, value: str, ignore_case: bool = False) -> bool:
    return _glob(pattern, ignore_case).match(value) is not None


# conditions --------------------------------------------------------------------------------------------

def _str_eq(a: str, b: str) -> bool:
    return a == b


def _str_ieq(a: str, b: str) -> bool:
    return a.lower() == b.lower()


def _str_like(value: str, pattern: str) -> bool:
    return glob_match(pattern, value)


def _number(text: str) -> float:
    return float(text)


def _date(text: str) -> float:
    if text.lstrip("-").isdigit():
        return float(text)
    moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    return (moment if moment.tzinfo else moment.replace(tzinfo=UTC)).timestamp()


@lru_cache(maxsize=1024)
def _network(text: str) -> ipaddress.IPv4Network | ipaddress.IPv6Network:
    return ipaddress.ip_network(text, strict=False)


@lru_cache(maxsize=4096)
def _address(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(text)
    except ValueError:
        return None


def _ip_in(value: str, network: str) -> bool:
    address = _address(value)
    try:
        return address is not None and address in _network(network)
    except ValueError:
        return False


def _compare(convert: Callable[[str], float], test: Callable[[float, float], bool]) -> Callable[[str, str], bool]:
    def compare(value: str, expected: str) -> bool:
        try:
            return test(convert(value), convert(expected))
        except ValueError:
            return False

    return compare


# operator -> (test of one request value against one policy value, negated)
_OPERATORS: dict[str, tuple[Callable[[str, str], bool], bool]] = {
    "stringequals": (_str_eq, False),
    "stringnotequals": (_str_eq, True),
    "stringequalsignorecase": (_str_ieq, False),
    "stringnotequalsignorecase": (_str_ieq, True),
    "stringlike": (_str_like, False),
    "stringnotlike": (_str_like, True),
    "numericequals": (_compare(_number, lambda a, b: a == b), False),
    "numericnotequals": (_compare(_number, lambda a, b: a == b), True),
    "numericlessthan": (_compare(_number, lambda a, b: a < b), False),
    "numericlessthanequals": (_compare(_number, lambda a, b: a <= b), False),
    "numericgreaterthan": (_compare(_number, lambda a, b: a > b), False),
    "numericgreaterthanequals": (_compare(_number, lambda a, b: a >= b), False),
    "dateequals": (_compare(_date, lambda a, b: a == b), False),
    "datenotequals": (_compare(_date, lambda a, b: a == b), True),
    "datelessthan": (_compare(_date, lambda a, b: a < b), False),
    "datelessthanequals": (_compare(_date, lambda a, b: a <= b), False),
    "dategreaterthan": (_compare(_date, lambda a, b: a > b), False),
    "dategreaterthanequals": (_compare(_date, lambda a, b: a >= b), False),
    "bool": (_str_ieq, False),
    "ipaddress": (_ip_in, False),
    "notipaddress": (_ip_in, True),
    "arnequals": (_str_eq, False),
    "arnnotequals": (_str_eq, True),
    "arnlike": (_str_like, False),
    "arnnotlike": (_str_like, True),
}


@dataclass(frozen=True)
class Condition:
    operator: str  # lower case, without IfExists and set prefix
    key: str  # lower case
    values: tuple[str, ...]
    if_exists: bool = False
    quantifier: str = ""  # "", "forallvalues", "foranyvalue"

    def holds(self, keys: Mapping[str, Sequence[str]]) -> bool:
        present = keys.get(self.key)
        if self.operator == "null":
            want_absent = self.values[0].lower() == "true"
            return (not present) == want_absent
        if not present:
            if self.quantifier == "forallvalues":
                return True
            # a missing key matches nothing: the positive operators fail, the negated ones hold
            return self.if_exists or _OPERATORS[self.operator][1]
        test, negated = _OPERATORS[self.operator]

        def one(value: str) -> bool:
            hit = any(test(value, expected) for expected in self.values)
            return not hit if negated else hit

        if self.quantifier == "forallvalues":
            return all(one(v) for v in present)
        return any(one(v) for v in present)


def _parse_conditions(raw: Any) -> tuple[Condition, ...]:
    if not isinstance(raw, dict):
        raise PolicyInvalid("Condition must be an object of operators")
    out: list[Condition] = []
    for op_name, block in raw.items():
        if not isinstance(op_name, str) or not isinstance(block, dict) or not block:
            raise PolicyInvalid(f"Invalid Condition operator block: {op_name!r}")
        name = op_name.lower()
        quantifier = ""
        for prefix in ("forallvalues:", "foranyvalue:"):
            if name.startswith(prefix):
                quantifier, name = prefix[:-1], name[len(prefix):]
        if_exists = name.endswith("ifexists") and name != "null"
        if if_exists:
            name = name[: -len("ifexists")]
        if name != "null" and name not in _OPERATORS:
            raise PolicyInvalid(f"Invalid Condition type: {op_name}")
        for key, value in block.items():
            values = value if isinstance(value, list) else [value]
            if not values or not all(isinstance(v, (str, int, float, bool)) for v in values):
                raise PolicyInvalid(f"Invalid Condition value for {key}")
            texts = tuple(str(v).lower() if isinstance(v, bool) else str(v) for v in values)
            if name == "null" and texts[0].lower() not in ("true", "false"):
                raise PolicyInvalid(f"Null condition on {key} must be true or false")
            if name in ("ipaddress", "notipaddress"):
                for text in texts:
                    try:
                        ipaddress.ip_network(text, strict=False)
                    except ValueError:
                        raise PolicyInvalid(f"Invalid IP address in Condition: {text}") from None
            out.append(Condition(name, key.lower(), texts, if_exists, quantifier))
    return tuple(out)


# statements --------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Principals:
    """A statement's Principal (or NotPrincipal): ``*`` or named users."""

    anyone: bool = False
    user_ids: frozenset[str] = frozenset()  # canonical ids / account ids
    usernames: frozenset[str] = frozenset()  # from arn:aws:iam::…:user/NAME

    def covers(self, caller: Caller) -> bool:
        if self.anyone:
            return True
        if caller.anonymous:
            return False
        return str(caller.user_id) in self.user_ids or caller.username in self.usernames


_USER_ARN = re.compile(r"^arn:aws:iam::([^:]*):(?:user/(?:.*/)?(.+)|root)$")


def _parse_principal(raw: Any) -> Principals:
    if raw == "*":
        return Principals(anyone=True)
    if not isinstance(raw, dict) or not raw:
        raise PolicyInvalid("Invalid principal in policy")
    ids: set[str] = set()
    names: set[str] = set()
    for kind, value in raw.items():
        values = value if isinstance(value, list) else [value]
        if kind not in ("AWS", "CanonicalUser") or not values or not all(isinstance(v, str) for v in values):
            raise PolicyInvalid("Invalid principal in policy")
        for v in values:
            if v == "*":
                return Principals(anyone=True)
            arn = _USER_ARN.match(v) if kind == "AWS" else None
            if arn is not None:
                if arn.group(2):
                    names.add(arn.group(2))
                elif arn.group(1):
                    ids.add(arn.group(1))
            elif v.isdigit():
                ids.add(v)
            else:
                raise PolicyInvalid(f"Invalid principal in policy: {v}")
    return Principals(False, frozenset(ids), frozenset(names))


@dataclass(frozen=True)
class Statement:
    sid: str
    effect: Literal["Allow", "Deny"]
    principals: Principals
    not_principal: bool
    actions: tuple[str, ...]
    not_action: bool
    resources: tuple[str, ...]
    not_resource: bool
    conditions: tuple[Condition, ...]
    # why the stored statement could not be read: then a Deny read at its widest that spares the bucket owner
    unreadable: str = ""

    def applies(self, caller: Caller, ctx: Context) -> bool:
        if self.principals.covers(caller) == self.not_principal:
            return False
        if any(glob_match(a, ctx.action, ignore_case=True) for a in self.actions) == self.not_action:
            return False
        if any(glob_match(r, ctx.resource) for r in self.resources) == self.not_resource:
            return False
        return all(c.holds(ctx.keys) for c in self.conditions)

    @property
    def public(self) -> bool:
        """An Allow anyone can use: a wildcard principal not narrowed to addresses or accounts."""
        if self.effect != "Allow" or not (self.principals.anyone and not self.not_principal):
            return False
        narrowing = {"aws:sourceip", "aws:sourcevpc", "aws:sourcevpce", "aws:sourceaccount", "aws:sourcearn",
                     "aws:principalaccount", "aws:userid", "aws:username", "aws:principalarn"}
        return not any(c.key in narrowing and c.operator in ("ipaddress", "stringequals", "arnequals")
                       for c in self.conditions)


def _strings(raw: Any, what: str) -> tuple[str, ...]:
    values = raw if isinstance(raw, list) else [raw]
    if not values or not all(isinstance(v, str) and v for v in values):
        raise PolicyInvalid(f"Policy has an invalid {what}")
    return tuple(values)


def _actions(raw: Any) -> tuple[str, ...]:
    actions = _strings(raw, "action")
    for action in actions:
        if action != "*" and not action.lower().startswith("s3:"):
            raise PolicyInvalid(f"Policy has invalid action: {action}")
    return actions


def _resources(raw: Any, bucket: str) -> tuple[str, ...]:
    resources = _strings(raw, "resource")
    for resource in resources:
        if resource == "*":
            continue
        if not resource.startswith("arn:aws:s3:::"):
            raise PolicyInvalid(f"Policy has invalid resource: {resource}")
        if not glob_match(resource.removeprefix("arn:aws:s3:::").split("/", 1)[0], bucket):
            raise PolicyInvalid("Action does not apply to any resource(s) in statement")
    return resources


def _parse_statement(raw: Any, bucket: str, index: int) -> Statement:
    if not isinstance(raw, dict):
        raise PolicyInvalid("Statement must be an object")
    known = {"Sid", "Effect", "Principal", "NotPrincipal", "Action", "NotAction", "Resource", "NotResource",
             "Condition"}
    unknown = set(raw) - known
    if unknown:
        raise PolicyInvalid(f"Unknown field {sorted(unknown)[0]} in statement")
    effect = raw.get("Effect")
    if effect not in ("Allow", "Deny"):
        raise PolicyInvalid(f"Invalid effect: {effect}")
    if ("Principal" in raw) == ("NotPrincipal" in raw):
        raise PolicyInvalid("Missing required field Principal")
    if ("Action" in raw) == ("NotAction" in raw):
        raise PolicyInvalid("Missing required field Action")
    if ("Resource" in raw) == ("NotResource" in raw):
        raise PolicyInvalid("Missing required field Resource")
    actions = _actions(raw.get("Action", raw.get("NotAction")))
    resources = _resources(raw.get("Resource", raw.get("NotResource")), bucket)
    sid = raw.get("Sid", "")
    if not isinstance(sid, str):
        raise PolicyInvalid("Sid must be a string")
    return Statement(
        sid=sid or f"statement {index + 1}", effect=effect,
        principals=_parse_principal(raw.get("Principal", raw.get("NotPrincipal"))),
        not_principal="NotPrincipal" in raw, actions=actions, not_action="NotAction" in raw,
        resources=resources, not_resource="NotResource" in raw,
        conditions=_parse_conditions(raw["Condition"]) if "Condition" in raw else (),
    )


@dataclass(frozen=True)
class Policy:
    statements: tuple[Statement, ...]
    problems: tuple[str, ...] = ()  # what ``parse_stored`` could not read, and what it made of it

    def evaluate(self, caller: Caller, ctx: Context, skip_public: bool = False, owner: bool = False) -> Decision:
        """Deny if any applicable statement denies, else allow if one allows, else None. ``skip_public``
        ignores public Allow statements (RestrictPublicBuckets); ``owner``: the caller owns the bucket, whom
        the Denies standing for unreadable statements spare."""
        allowed = False
        for st in self.statements:
            if st.effect == "Allow" and (allowed or (skip_public and st.public)):
                continue
            if owner and st.unreadable:
                continue
            if st.applies(caller, ctx):
                if st.effect == "Deny":
                    return "deny"
                allowed = True
        return "allow" if allowed else None

    @property
    def public(self) -> bool:
        return any(st.public for st in self.statements)

    @property
    def condition_keys(self) -> frozenset[str]:
        return frozenset(c.key for st in self.statements for c in st.conditions)

    @property
    def named_users(self) -> tuple[frozenset[str], frozenset[str]]:
        """(ids, usernames) the statements name, for the service to check they exist."""
        ids: set[str] = set()
        names: set[str] = set()
        for st in self.statements:
            ids |= st.principals.user_ids
            names |= st.principals.usernames
        return frozenset(ids), frozenset(names)


def parse(text: str, bucket: str) -> Policy:
    """The policy of ``bucket`` in ``text`` (JSON), or PolicyInvalid saying why S3 would refuse it."""
    if len(text.encode()) > MAX_POLICY_BYTES:
        raise PolicyInvalid(f"Policies must be at most {MAX_POLICY_BYTES} bytes")
    try:
        doc = json.loads(text)
    except (ValueError, RecursionError):  # RecursionError: arrays nested some thousand deep
        raise PolicyInvalid("Policies must be valid JSON") from None
    if not isinstance(doc, dict):
        raise PolicyInvalid("Policies must be a JSON object")
    unknown = set(doc) - {"Version", "Id", "Statement"}
    if unknown:
        raise PolicyInvalid(f"Unknown field {sorted(unknown)[0]}")
    version = doc.get("Version", "2008-10-17")
    if version not in VERSIONS:
        raise PolicyInvalid(f"Invalid policy version: {version}")
    raw = doc.get("Statement")
    statements = raw if isinstance(raw, list) else [raw] if raw is not None else []
    if not statements:
        raise PolicyInvalid("Missing required field Statement")
    return Policy(tuple(_parse_statement(st, bucket, i) for i, st in enumerate(statements)))


def parse_stored(text: str, bucket: str) -> Policy:
    """The stored policy of ``bucket``, read as far as it can be and failing closed where it cannot (see the
    module's docstring); ``problems`` says what could not be read. Never raises."""
    try:
        return parse(text, bucket)
    except PolicyInvalid as exc:
        whole = exc.message
    try:
        doc = json.loads(text)
    except (ValueError, RecursionError):
        doc = None
    raw = doc.get("Statement") if isinstance(doc, dict) else None
    items = raw if isinstance(raw, list) else [raw] if raw is not None else []
    if not items:
        return Policy((_widest(None, bucket, 0, whole),),
                      (f"the policy cannot be read ({whole}): every request of anyone but the bucket owner and "
                       "admins is denied",))
    statements: list[Statement] = []
    problems: list[str] = []
    for index, item in enumerate(items):
        try:
            statements.append(_parse_statement(item, bucket, index))
        except PolicyInvalid as exc:
            name = _sid(item, index)
            if isinstance(item, dict) and item.get("Effect") == "Allow":
                problems.append(f"{name} cannot be read ({exc.message}): an Allow, it grants nothing")
            else:
                statements.append(_widest(item, bucket, index, exc.message))
                problems.append(f"{name} cannot be read ({exc.message}): it denies everything it could match "
                                "to anyone but the bucket owner and admins")
    # every statement read: what is wrong is the document's frame (version, size, a field), not their meaning
    return Policy(tuple(statements), tuple(problems) or (f"the policy is not valid ({whole}); its statements "
                                                          "apply as written",))


def _sid(raw: Any, index: int) -> str:
    sid = raw.get("Sid") if isinstance(raw, dict) else None
    return sid if isinstance(sid, str) and sid else f"statement {index + 1}"


def _read(read: Callable[[], Any], widest: Any) -> Any:
    try:
        return read()
    except PolicyInvalid:
        return widest


def _widest(raw: Any, bucket: str, index: int, why: str) -> Statement:
    """A Deny of everything the unreadable statement ``raw`` could match: what of it can be read narrows it
    (its principals, actions, resources, each condition block), what cannot is taken at its widest."""
    raw = raw if isinstance(raw, dict) else {}

    def part(name: str, read: Callable[[Any], Any], widest: Any) -> tuple[Any, bool]:
        """(the value of ``name`` or ``Not<name>``, whether negated); (``widest``, False) when unreadable."""
        if (name in raw) == (f"Not{name}" in raw):
            return widest, False
        negated = f"Not{name}" in raw
        value = _read(lambda: read(raw[f"Not{name}" if negated else name]), None)
        return (widest, False) if value is None else (value, negated)

    principals, not_principal = part("Principal", _parse_principal, Principals(anyone=True))
    actions, not_action = part("Action", _actions, ("*",))
    resources, not_resource = part("Resource", lambda r: _resources(r, bucket), ("*",))
    blocks = raw.get("Condition") if isinstance(raw.get("Condition"), dict) else {}
    conditions: list[Condition] = []
    for op, block in blocks.items():
        # conditions only narrow a statement: a Deny without the blocks it cannot read matches more, never less
        try:
            conditions += _parse_conditions({op: block})
        except PolicyInvalid:
            continue
    return Statement(sid=_sid(raw, index), effect="Deny", principals=principals, not_principal=not_principal,
                     actions=actions, not_action=not_action, resources=resources, not_resource=not_resource,
                     conditions=tuple(conditions), unreadable=why)


# in words ----------------------------------------------------------------------------------------------

def _who(st: Statement, names: Mapping[str, str]) -> str:
    p = st.principals
    if p.anyone:
        who = "anyone, including anonymous (unsigned) requests"
    else:
        people = sorted({names.get(i, f"user #{i}") for i in p.user_ids} | set(p.usernames))
        who = ", ".join(people)
    return f"everyone except {who}" if st.not_principal else who


def describe(policy: Policy, names: Mapping[str, str] | None = None) -> list[str]:
    """One sentence per statement saying what it allows or denies to whom (``names``: id -> username)."""
    out = []
    for st in policy.statements:
        verb = "allows" if st.effect == "Allow" else "denies"
        actions = ", ".join(st.actions)
        what = f"every action except {actions}" if st.not_action else actions
        on = ", ".join(r.removeprefix("arn:aws:s3:::") for r in st.resources)
        where = f"everything except {on}" if st.not_resource else on
        who = _who(st, names or {})
        if st.unreadable:
            anyone = st.principals.anyone and not st.not_principal
            who = "everyone but the bucket owner" if anyone else f"{who} (the bucket owner excepted)"
        head = f"{st.sid} (unreadable, read at its widest)" if st.unreadable else st.sid
        text = f"{head}: {verb} {who} {what} on {where}"
        if st.conditions:
            text += " when " + " and ".join(
                f"{c.key} {c.operator}{' (if present)' if c.if_exists else ''} {' or '.join(c.values)}"
                for c in st.conditions)
        out.append(text + ("  [public]" if st.public else ""))
    return out
