"""The bucket policy language: what parses, what S3 refuses, and how a request is decided."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tierpilot.sharing import access
from tierpilot.sharing.access import PublicBlock, SharingState
from tierpilot.sharing.acl import Grant
from tierpilot.sharing.policy import Caller, Context, PolicyInvalid, describe, parse, parse_stored

ALICE = Caller(1, "alice")
BOB = Caller(2, "bob")
ANON = Caller(0, "anonymous", anonymous=True)


def doc(*statements: dict[str, Any]) -> str:
    return json.dumps({"Version": "2012-10-17", "Statement": list(statements)})


def stmt(effect: str = "Allow", principal: Any = "*", action: Any = "s3:GetObject",
         resource: Any = "arn:aws:s3:::data/*", **extra: Any) -> dict[str, Any]:
    raw = {"Effect": effect, "Principal": principal, "Action": action, "Resource": resource, **extra}
    return {k: v for k, v in raw.items() if v is not None}  # None: left out (NotAction/NotResource instead)


def get(key: str, **keys: list[str]) -> Context:
    return Context("s3:GetObject", f"arn:aws:s3:::data/{key}", dict(keys))


def test_public_read_of_a_prefix_allows_anyone_there_and_nothing_elsewhere() -> None:
    policy = parse(doc(stmt(resource="arn:aws:s3:::data/public/*")), "data")
    assert policy.evaluate(ANON, get("public/a.txt")) == "allow"
    assert policy.evaluate(ANON, get("private/a.txt")) is None
    assert policy.evaluate(ANON, Context("s3:PutObject", "arn:aws:s3:::data/public/a.txt")) is None
    assert policy.public


def test_explicit_deny_wins_over_any_allow() -> None:
    policy = parse(doc(stmt(action="s3:*"), stmt("Deny", action="s3:Get*", resource="arn:aws:s3:::data/secret/*")),
                   "data")
    assert policy.evaluate(BOB, get("open/x")) == "allow"
    assert policy.evaluate(BOB, get("secret/x")) == "deny"


def test_principals_name_tierpilot_users_by_arn_or_canonical_id() -> None:
    policy = parse(doc(stmt(principal={"AWS": ["arn:aws:iam::2:user/bob"]}),
                       stmt(principal={"CanonicalUser": "3"}, action="s3:ListBucket", resource="arn:aws:s3:::data")),
                   "data")
    assert policy.evaluate(BOB, get("k")) == "allow"
    assert policy.evaluate(ALICE, get("k")) is None
    assert policy.evaluate(ANON, get("k")) is None
    assert policy.evaluate(Caller(3, "carol"), Context("s3:ListBucket", "arn:aws:s3:::data")) == "allow"
    assert not policy.public


def test_action_wildcards_are_case_insensitive_and_not_action_inverts() -> None:
    policy = parse(doc(stmt(action="s3:get*"), stmt("Deny", NotAction=["s3:Get*", "s3:List*"],
                                                    action=None, principal="*")), "data")
    assert policy.evaluate(BOB, get("k")) == "allow"
    assert policy.evaluate(BOB, Context("s3:DeleteObject", "arn:aws:s3:::data/k")) == "deny"


def test_not_resource_covers_everything_but_the_named() -> None:
    policy = parse(doc(stmt("Deny", NotResource="arn:aws:s3:::data/shared/*", resource=None)), "data")
    assert policy.evaluate(BOB, get("shared/a")) is None
    assert policy.evaluate(BOB, get("other/a")) == "deny"


def test_source_ip_and_secure_transport_conditions() -> None:
    policy = parse(doc(stmt(Condition={"IpAddress": {"aws:SourceIp": "10.0.0.0/8"}}),
                       stmt("Deny", action="s3:*", Condition={"Bool": {"aws:SecureTransport": False}})), "data")
    assert policy.evaluate(BOB, get("k", **{"aws:sourceip": ["10.1.2.3"], "aws:securetransport": ["true"]})) == "allow"
    assert policy.evaluate(BOB, get("k", **{"aws:sourceip": ["192.168.1.1"], "aws:securetransport": ["true"]})) is None
    assert policy.evaluate(BOB, get("k", **{"aws:sourceip": ["10.1.2.3"], "aws:securetransport": ["false"]})) == "deny"
    assert not policy.public  # the allow is narrowed to an address range


def test_prefix_condition_on_listing_and_string_like() -> None:
    policy = parse(doc(stmt(action="s3:ListBucket", resource="arn:aws:s3:::data",
                            Condition={"StringLike": {"s3:prefix": ["home/bob/*", "shared"]}})), "data")
    listing = Context("s3:ListBucket", "arn:aws:s3:::data", {"s3:prefix": ["home/bob/x"]})
    assert policy.evaluate(BOB, listing) == "allow"
    listing.keys["s3:prefix"] = ["home/alice/"]
    assert policy.evaluate(BOB, listing) is None
    del listing.keys["s3:prefix"]  # a missing key matches no positive operator
    assert policy.evaluate(BOB, listing) is None


def test_negated_operators_hold_when_the_key_is_missing_and_if_exists_passes() -> None:
    policy = parse(doc(stmt("Deny", action="s3:PutObject",
                            Condition={"StringNotEquals": {"s3:x-amz-acl": "bucket-owner-full-control"}}),
                       stmt(action="s3:PutObject", Condition={"StringEqualsIfExists": {"s3:x-amz-acl": "private"}})),
                   "data")
    put = Context("s3:PutObject", "arn:aws:s3:::data/k", {})
    assert policy.evaluate(BOB, put) == "deny"  # no ACL header: not bucket-owner-full-control
    put.keys["s3:x-amz-acl"] = ["bucket-owner-full-control"]
    assert policy.evaluate(BOB, put) is None
    lenient = parse(doc(stmt(action="s3:PutObject", Condition={"StringEqualsIfExists": {"s3:x-amz-acl": "private"}})),
                    "data")
    assert lenient.evaluate(BOB, Context("s3:PutObject", "arn:aws:s3:::data/k", {})) == "allow"


def test_existing_object_tag_numeric_and_null_conditions() -> None:
    policy = parse(doc(stmt(Condition={"StringEquals": {"s3:ExistingObjectTag/security": "public"},
                                       "NumericLessThanEquals": {"s3:max-keys": "10"},
                                       "Null": {"s3:VersionId": "true"}})), "data")
    ctx = get("k", **{"s3:existingobjecttag/security": ["public"], "s3:max-keys": ["5"]})
    assert policy.evaluate(BOB, ctx) == "allow"
    ctx.keys["s3:versionid"] = ["abc"]
    assert policy.evaluate(BOB, ctx) is None


@pytest.mark.parametrize(("text", "message"), [
    ("{not json", "valid JSON"),
    (doc(stmt(effect="Maybe")), "Invalid effect"),
    (doc(stmt(action="ec2:RunInstances")), "invalid action"),
    (doc(stmt(resource="arn:aws:s3:::other-bucket/*")), "does not apply"),
    (doc(stmt(resource="arn:aws:sqs:::data")), "invalid resource"),
    (doc(stmt(principal={"AWS": "somebody"})), "principal"),
    (doc(stmt(Condition={"StringEqualz": {"s3:prefix": "a"}})), "Condition type"),
    (doc(stmt(Condition={"IpAddress": {"aws:SourceIp": "not-an-ip"}})), "IP address"),
    (json.dumps({"Version": "2012-10-17", "Statement": []}), "Statement"),
    (json.dumps({"Version": "2099-01-01", "Statement": [stmt()]}), "version"),
    (doc({"Effect": "Allow", "Principal": "*", "Resource": "arn:aws:s3:::data/*"}), "Action"),
])
def test_malformed_policies_are_refused_with_the_reason(text: str, message: str) -> None:
    with pytest.raises(PolicyInvalid, match=message):
        parse(text, "data")


def test_describe_says_each_statement_in_words() -> None:
    policy = parse(doc(stmt(Sid="PublicRead", resource="arn:aws:s3:::data/pub/*"),
                       stmt("Deny", principal={"AWS": "2"}, action="s3:DeleteObject")), "data")
    lines = describe(policy, {"2": "bob"})
    assert lines[0].startswith("PublicRead: allows anyone, including anonymous (unsigned) requests s3:GetObject on "
                               "data/pub/*")
    assert lines[0].endswith("[public]")
    assert lines[1] == "statement 2: denies bob s3:DeleteObject on data/*"


def test_owner_is_bound_by_explicit_deny_but_may_always_manage_the_policy() -> None:
    state = SharingState(policy=parse(doc(stmt("Deny", action="s3:*", resource=["arn:aws:s3:::data",
                                                                                 "arn:aws:s3:::data/*"])), "data"))
    assert not access.decide(state, ALICE, is_owner=True, is_admin=False, ctx=get("k"))
    assert access.decide(state, ALICE, is_owner=True, is_admin=False,
                         ctx=Context("s3:DeleteBucketPolicy", "arn:aws:s3:::data"))
    assert access.decide(state, BOB, is_owner=False, is_admin=True, ctx=get("k"))


def test_restrict_public_buckets_ignores_public_allows_for_others() -> None:
    policy = parse(doc(stmt()), "data")
    open_state = SharingState(policy=policy)
    restricted = SharingState(policy=policy, public_block=PublicBlock(restrict_public_buckets=True))
    assert access.decide(open_state, ANON, is_owner=False, is_admin=False, ctx=get("k"))
    assert not access.decide(restricted, ANON, is_owner=False, is_admin=False, ctx=get("k"))


def test_versioned_requests_map_to_the_version_actions() -> None:
    assert access.action_for("GET", "object", "", versioned=True) == "s3:GetObjectVersion"
    assert access.action_for("GET", "object", "acl", versioned=True) == "s3:GetObjectVersionAcl"
    assert access.action_for("DELETE", "object", "", versioned=True) == "s3:DeleteObjectVersion"
    assert access.action_for("PUT", "object", "tagging", versioned=False) == "s3:PutObjectTagging"
    assert access.action_for("GET", "bucket", "", versioned=False) == "s3:ListBucket"


def test_a_stored_deny_that_cannot_be_read_is_taken_at_its_widest_and_spares_only_the_owner() -> None:
    text = doc(stmt(principal={"AWS": "arn:aws:iam::2:user/bob"}, action="s3:*"),
               stmt("Deny", action="s3:GetObject", resource="arn:aws:s3:::data/secret/*",
                    Condition={"StringEqualsLegacy": {"aws:username": "nobody"},
                               "Bool": {"aws:securetransport": "false"}}),
               stmt("Deny", principal={"AWS": "not-an-arn"}, action="s3:DeleteObject"),
               stmt("Allow", action="s3:PutObject", Condition={"Legacy": {"aws:username": "bob"}}))
    with pytest.raises(PolicyInvalid):
        parse(text, "data")
    policy = parse_stored(text, "data")
    assert [(st.effect, bool(st.unreadable)) for st in policy.statements] == [
        ("Allow", False), ("Deny", True), ("Deny", True)]  # the unreadable Allow is gone: it grants nothing
    assert len(policy.problems) == 3 and policy.problems[2].endswith("an Allow, it grants nothing")
    plain = {"aws:securetransport": ["false"]}
    # what can be read narrows the Deny (action, resource, the Bool block); the unknown block is dropped
    assert policy.evaluate(BOB, get("secret/x", **plain)) == "deny"
    assert policy.evaluate(BOB, get("secret/x", **{"aws:securetransport": ["true"]})) == "allow"
    assert policy.evaluate(BOB, get("open/x", **plain)) == "allow"
    # the unreadable principal is anyone: bob's delete is denied, his put was never granted
    assert policy.evaluate(BOB, Context("s3:DeleteObject", "arn:aws:s3:::data/k")) == "deny"
    assert policy.evaluate(BOB, Context("s3:PutObject", "arn:aws:s3:::data/k")) == "allow"  # bob's s3:*
    assert policy.evaluate(ANON, Context("s3:PutObject", "arn:aws:s3:::data/k")) is None
    # the owner is spared the widened Denies, never the readable ones
    assert policy.evaluate(ALICE, Context("s3:DeleteObject", "arn:aws:s3:::data/k"), owner=True) is None
    owned = parse_stored(doc(stmt("Deny", action="s3:DeleteObject", resource="arn:aws:s3:::data/keep/*"),
                             stmt("Deny", action="s3:GetObject", Condition={"Nope": {"a": "b"}})), "data")
    assert owned.evaluate(ALICE, Context("s3:DeleteObject", "arn:aws:s3:::data/keep/k"), owner=True) == "deny"
    assert owned.evaluate(ALICE, get("x"), owner=True) is None
    assert owned.evaluate(BOB, get("x")) == "deny"
    assert any("(unreadable, read at its widest): denies everyone but the bucket owner s3:GetObject" in line
               for line in describe(owned))


@pytest.mark.parametrize("text", ["{not json", "[" * 20_000, '"a string"', json.dumps({"Statement": []}),
                                  json.dumps({"Version": "2012-10-17"}), json.dumps({"Statement": [1, "x"]})])
def test_a_stored_policy_that_cannot_be_read_at_all_denies_everyone_but_owner_and_admins(text: str) -> None:
    policy = parse_stored(text, "data")
    assert policy.problems and all(st.effect == "Deny" and st.unreadable for st in policy.statements)
    state = SharingState(policy=policy, grants=(Grant("uri:http://acs.amazonaws.com/groups/global/AllUsers",
                                                      "READ"),))
    listing = Context("s3:ListBucket", "arn:aws:s3:::data")
    assert not access.decide(state, ANON, is_owner=False, is_admin=False, ctx=listing)  # the ACL grant too
    assert not access.decide(state, BOB, is_owner=False, is_admin=False, ctx=get("k"))
    assert access.decide(state, ALICE, is_owner=True, is_admin=False, ctx=get("k"))
    assert access.decide(state, BOB, is_owner=False, is_admin=True, ctx=get("k"))


def test_a_stored_policy_whose_statements_read_but_whose_frame_does_not_applies_as_written() -> None:
    text = json.dumps({"Version": "2011-01-01", "Statement": [stmt(resource="arn:aws:s3:::data/pub/*")]})
    policy = parse_stored(text, "data")
    assert policy.problems == ("the policy is not valid (Invalid policy version: 2011-01-01); its statements apply "
                               "as written",)
    assert policy.evaluate(ANON, get("pub/a")) == "allow" and policy.evaluate(ANON, get("other")) is None


def test_arrays_nested_past_the_recursion_limit_are_malformed_not_a_crash() -> None:
    with pytest.raises(PolicyInvalid, match="valid JSON"):
        parse("[" * 20_000, "data")
