"""What no input may carry, whatever its declared type: checked once, at the API's edge.

The database stores 64-bit integers and UTF-8 text without NUL; JSON has no NaN or Infinity. A value past
those limits is refused here with the field's location instead of failing later in a query, a computation or
the encoder of the answer. The checks follow the operation's OpenAPI schema, so a string is read as a number
exactly where the API would read it as one (a path id, a numeric query parameter, a JSON string sent for a
number field).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from decimal import Decimal, InvalidOperation
from typing import Annotated, Any

from pydantic import Field

INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1
INT32_MAX = 2**31 - 1

RowId = Annotated[int, Field(ge=1, le=INT32_MAX)]
"""The id of a row: primary keys are 32-bit integers on PostgreSQL (restore items' are 64-bit)."""

Loc = tuple[str | int, ...]
Schema = Mapping[str, Any]


def text_problem(value: str) -> str | None:
    """Why a string cannot be stored or sent as UTF-8 text, or None."""
    if "\x00" in value:
        return "must not contain NUL characters"
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return "must be valid Unicode (no lone surrogates)"
    return None


def _error(kind: str, loc: Loc, msg: str, value: Any) -> dict[str, Any]:
    return {"type": kind, "loc": loc, "msg": msg, "input": value}


class _Schemas:
    """Resolves ``$ref``s and unions of an OpenAPI document's schemas into their concrete branches."""

    def __init__(self, components: Mapping[str, Schema]) -> None:
        self.components = components

    def branches(self, schema: Schema | None, depth: int = 0) -> list[Schema]:
        if not schema or depth > 16:
            return []
        ref = schema.get("$ref")
        if isinstance(ref, str):
            return self.branches(self.components.get(ref.rsplit("/", 1)[-1]), depth + 1)
        found: list[Schema] = []
        for key in ("anyOf", "oneOf", "allOf"):
            for sub in schema.get(key) or ():
                found.extend(self.branches(sub, depth + 1))
        return found or [schema]

    @staticmethod
    def types(branches: Sequence[Schema]) -> set[str]:
        found: set[str] = set()
        for b in branches:
            kind = b.get("type")
            found.update([kind] if isinstance(kind, str) else kind or ())
        return found

    def member(self, branches: Sequence[Schema], key: str) -> Schema | None:
        """The schema of a JSON object's member in any branch (declared property or additional one)."""
        found = []
        for b in branches:
            props = b.get("properties") or {}
            if key in props:
                found.append(props[key])
            elif isinstance(b.get("additionalProperties"), Mapping):
                found.append(b["additionalProperties"])
        return {"anyOf": found} if found else None

    def item(self, branches: Sequence[Schema], index: int) -> Schema | None:
        found = []
        for b in branches:
            prefix = b.get("prefixItems") or ()
            if index < len(prefix):
                found.append(prefix[index])
            elif isinstance(b.get("items"), Mapping):
                found.append(b["items"])
        return {"anyOf": found} if found else None


def _numeric_string_problem(value: str, types: set[str]) -> str | None:
    """A string the API would read as a number (a path id, a query value, "12" sent for an integer field)."""
    if "string" in types or not types & {"integer", "number"}:
        return None
    text = value.strip().replace("_", "")
    try:
        number = Decimal(text)
    except InvalidOperation:
        return None  # not a number at all: the declared type's own validation answers
    if not number.is_finite():
        return "must be a finite number"
    if "number" not in types and not INT64_MIN <= number <= INT64_MAX:
        return f"must be an integer from {INT64_MIN} to {INT64_MAX}"
    if "number" in types and not math.isfinite(float(number)):
        return "must be a finite number"
    return None


def check(value: Any, schema: Schema | None, components: Mapping[str, Schema], loc: Loc) -> list[dict[str, Any]]:
    """Every value in ``value`` past the limits above, as validation errors located below ``loc``."""
    errors: list[dict[str, Any]] = []
    _check(value, schema, _Schemas(components), loc, errors)
    return errors


def _check(value: Any, schema: Schema | None, schemas: _Schemas, loc: Loc, errors: list[dict[str, Any]]) -> None:
    if len(errors) >= 20:
        return
    branches = schemas.branches(schema)
    types = schemas.types(branches)
    if isinstance(value, bool) or value is None:
        return
    if isinstance(value, int):
        if not INT64_MIN <= value <= INT64_MAX:
            errors.append(_error("int_out_of_range", loc, f"must be an integer from {INT64_MIN} to {INT64_MAX}",
                                 value))
    elif isinstance(value, float):
        if not math.isfinite(value):
            errors.append(_error("finite_number", loc, "must be a finite number", value))
        elif "integer" in types and "number" not in types and not INT64_MIN <= value <= INT64_MAX:
            errors.append(_error("int_out_of_range", loc, f"must be an integer from {INT64_MIN} to {INT64_MAX}",
                                 value))
    elif isinstance(value, str):
        problem = text_problem(value) or _numeric_string_problem(value, types)
        if problem:
            errors.append(_error("value_error", loc, problem, value))
    elif isinstance(value, Mapping):
        for key, member in value.items():
            problem = text_problem(str(key))
            if problem:
                errors.append(_error("value_error", (*loc, str(key)), f"member name {problem}", key))
                continue
            _check(member, schemas.member(branches, str(key)), schemas, (*loc, str(key)), errors)
    elif isinstance(value, list):
        for index, member in enumerate(value):
            _check(member, schemas.item(branches, index), schemas, (*loc, index), errors)


def json_safe(value: Any) -> Any:
    """``value`` with what JSON cannot carry spelled out: NaN and infinities as text, lone surrogates escaped."""
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    if isinstance(value, str) and text_problem(value):
        return value.encode("utf-8", "backslashreplace").decode("utf-8").replace("\x00", "\\x00")
    if isinstance(value, Mapping):
        return {json_safe(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [json_safe(v) for v in value]
    return value
