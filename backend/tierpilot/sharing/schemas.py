"""API shapes of the Sharing panel."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field


class UserGrantOut(BaseModel):
    user_id: int
    username: str
    access: Literal["read", "read-write"]


class PublicBlockOut(BaseModel):
    block_public_acls: bool
    ignore_public_acls: bool
    block_public_policy: bool
    restrict_public_buckets: bool


class SharingOut(BaseModel):
    """Who may reach a bucket besides its owner and admins."""

    bucket: str
    owner: str
    users: list[UserGrantOut]
    public_prefixes: list[str] = Field(description="prefixes anyone may read and list, unsigned requests included")
    policy: str | None = Field(None, description="the bucket policy (JSON) as stored")
    policy_words: list[str] = Field(description="one sentence per statement of the policy")
    policy_problems: list[str] = Field(
        [], description="what of the stored policy this version cannot read, and how it is applied meanwhile "
                        "(failing closed: an unreadable Allow grants nothing, any other unreadable statement denies "
                        "everything it could match to all but the owner and admins); empty when it reads in full")
    policy_public: bool
    acl_grants: list[str] = Field(description="bucket ACL grants besides the owner's, e.g. 'READ to AllUsers'")
    ownership: str | None = None
    public_block: PublicBlockOut | None = None


class UserGrantIn(BaseModel):
    access: Literal["read", "read-write"]


class PublicPrefixIn(BaseModel):
    prefix: str = Field(max_length=1024, description="key prefix; empty for the whole bucket")
    confirm: bool = Field(description="must be true: the objects become readable by anyone on the network")


class PolicyIn(BaseModel):
    policy: str = Field(max_length=20 * 1024, description="a bucket policy (JSON)")


class PolicyCheckOut(BaseModel):
    valid: bool
    error: str | None = None
    words: list[str] = []
    public: bool = False


class SharedBucketOut(BaseModel):
    bucket: str
    owner: str
    access: list[str] = Field(description="what the caller may do, e.g. s3:GetObject")
    may_list: bool = Field(False, description="the Browser may list the whole bucket (s3:ListBucket)")
    may_read: bool = Field(False, description="objects may be opened and downloaded (s3:GetObject on any key)")
    may_write: bool = Field(False, description="files may be uploaded and folders made (s3:PutObject on any key)")
    may_delete: bool = Field(False, description="objects may be deleted (s3:DeleteObject on any key)")
