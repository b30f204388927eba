"""Catalog errors: domain errors (the API answers their status) that also name the S3 error code
the gateway answers with."""

from __future__ import annotations

from typing import Any

from tierpilot.kit.errors import Conflict, DomainError, Forbidden, Invalid, NotFound


class CatalogError(DomainError):
    s3_code = "InternalError"
    s3_status = 500

    def __init__(self, message: str, **extra: Any) -> None:
        super().__init__(message, **extra)


class NoSuchBucket(CatalogError, NotFound):
    s3_code, s3_status = "NoSuchBucket", 404


class NoSuchKey(CatalogError, NotFound):
    s3_code, s3_status = "NoSuchKey", 404


class NoSuchUpload(CatalogError, NotFound):
    s3_code, s3_status = "NoSuchUpload", 404


class AccessDenied(CatalogError, Forbidden):
    s3_code, s3_status = "AccessDenied", 403


class ObjectLocked(AccessDenied):
    """A delete or overwrite of a version that object lock (retention or legal hold) protects."""


class InvalidBucketState(CatalogError, Conflict):
    """A bucket setting that its other settings forbid (versioning off under object lock, …)."""

    s3_code, s3_status = "InvalidBucketState", 409


class NoSuchVersion(CatalogError, NotFound):
    s3_code, s3_status = "NoSuchVersion", 404


class BucketAlreadyExists(CatalogError, Conflict):
    s3_code, s3_status = "BucketAlreadyExists", 409


class BucketAlreadyOwnedByYou(CatalogError, Conflict):
    s3_code, s3_status = "BucketAlreadyOwnedByYou", 409


class BucketNotEmpty(CatalogError, Conflict):
    s3_code, s3_status = "BucketNotEmpty", 409


class QuotaExceeded(CatalogError, Forbidden):
    """A write would take the bucket past its space reservation."""

    s3_code, s3_status = "QuotaExceeded", 403


class PreconditionFailed(CatalogError):
    status_code = 412
    s3_code, s3_status = "PreconditionFailed", 412


class InvalidObjectState(CatalogError, Forbidden):
    """An archived object read (or copied) without a completed restore."""

    s3_code, s3_status = "InvalidObjectState", 403


class InvalidInput(CatalogError, Invalid):
    """Bad input; ``s3_code`` says which S3 error it is."""

    s3_status = 400

    def __init__(self, message: str, s3_code: str = "InvalidArgument", **extra: Any) -> None:
        super().__init__(message, **extra)
        self.s3_code = s3_code


def invalid_bucket_name(message: str) -> InvalidInput:
    return InvalidInput(message, "InvalidBucketName")


def invalid_storage_class(storage_class: str) -> InvalidInput:
    return InvalidInput(f"The storage class {storage_class!r} is not provided by any tier", "InvalidStorageClass")


class CommitUnresolved(CatalogError):
    """A write whose commit got no answer and whose row was not found after it: not acknowledged, so the client
    retries it (its blob stays until fsck finds nothing pointing at it)."""

    status_code = 503
    s3_code, s3_status = "SlowDown", 503
