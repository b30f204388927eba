"""S3 errors: each carries the code, HTTP status and message a client expects."""

from __future__ import annotations


class S3Error(Exception):
    """An error answered as S3 XML (``<Error><Code>…``)."""

    def __init__(self, code: str, message: str, status: int = 400, **fields: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.status = status
        # extra elements S3 puts in the error body (BucketName, Key, UploadId, …)
        self.fields = fields
        self.headers: list[tuple[bytes, bytes]] = []


def access_denied(message: str = "Access Denied") -> S3Error:
    return S3Error("AccessDenied", message, 403)


def no_such_key(key: str) -> S3Error:
    return S3Error("NoSuchKey", "The specified key does not exist.", 404, Key=key)


def invalid_argument(message: str, name: str = "", value: str = "") -> S3Error:
    fields = {"ArgumentName": name, "ArgumentValue": value} if name else {}
    return S3Error("InvalidArgument", message, 400, **fields)


def invalid_request(message: str) -> S3Error:
    return S3Error("InvalidRequest", message, 400)


def malformed_xml() -> S3Error:
    return S3Error(
        "MalformedXML",
        "The XML you provided was not well-formed or did not validate against our published schema",
        400,
    )


def bad_digest(message: str = "The Content-MD5 you specified did not match what we received.") -> S3Error:
    return S3Error("BadDigest", message, 400)


def precondition_failed(condition: str = "") -> S3Error:
    fields = {"Condition": condition} if condition else {}
    return S3Error("PreconditionFailed", "At least one of the pre-conditions you specified did not hold", 412,
                   **fields)


def not_implemented(what: str) -> S3Error:
    return S3Error("NotImplemented", f"{what} is not implemented by this gateway", 501)


def invalid_reservation(message: str) -> S3Error:
    return S3Error("InvalidReservation", message, 403)
