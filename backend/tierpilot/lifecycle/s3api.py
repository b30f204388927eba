"""Gateway operations Put/Get/DeleteBucketLifecycle (``?lifecycle``), registered when the gateway starts.

They read and write the same stored configuration as the dashboard's API, so a rule set with the AWS
CLI shows in the dashboard and the other way round.
"""

from __future__ import annotations

from tierpilot.catalog.models import Bucket
from tierpilot.gateway.ext import Request, S3Error, bucket_of, install_expiration, read_xml_body, route
from tierpilot.kit.db import transaction
from tierpilot.kit.streaming import run
from tierpilot.lifecycle import expiry, service
from tierpilot.lifecycle.rules import LifecycleConfig, LifecycleInvalid
from tierpilot.lifecycle.s3xml import parse_xml, to_xml

MIN_SIZE_HEADER = "x-amz-transition-default-minimum-object-size"

install_expiration(expiry)


def _put(bucket: Bucket, config: LifecycleConfig, actor: str) -> LifecycleConfig:
    with transaction(write=True) as session:
        return service.put_config(session, bucket, config, actor)


def _get(bucket: Bucket) -> LifecycleConfig | None:
    with transaction() as session:
        return service.get_config(session, bucket)


def _delete(bucket: Bucket) -> None:
    with transaction(write=True) as session:
        service.delete_config(session, bucket)


def _s3_error(exc: LifecycleInvalid) -> S3Error:
    return S3Error(exc.s3_code, exc.message, 400)


@route("PUT", "bucket", "lifecycle")
async def put_bucket_lifecycle(req: Request) -> None:
    bucket = await bucket_of(req)
    body = await read_xml_body(req)
    try:
        config = parse_xml(body, req.header(MIN_SIZE_HEADER))
        stored = await run(_put, bucket, config, f"s3:{req.user.username}")
    except LifecycleInvalid as exc:
        raise _s3_error(exc) from None
    expiry.forget(bucket.id)
    await req.respond(200, headers=[(MIN_SIZE_HEADER.encode(),
                                     stored.transition_default_minimum_object_size.encode())], content_type=None)


@route("GET", "bucket", "lifecycle")
async def get_bucket_lifecycle(req: Request) -> None:
    bucket = await bucket_of(req)
    config = await run(_get, bucket)
    if config is None:
        raise S3Error("NoSuchLifecycleConfiguration", "The lifecycle configuration does not exist", 404,
                      BucketName=bucket.name)
    await req.respond(200, to_xml(config),
                      headers=[(MIN_SIZE_HEADER.encode(), config.transition_default_minimum_object_size.encode())])


@route("DELETE", "bucket", "lifecycle")
async def delete_bucket_lifecycle(req: Request) -> None:
    bucket = await bucket_of(req)
    await run(_delete, bucket)
    expiry.forget(bucket.id)
    await req.respond(204, content_type=None)
