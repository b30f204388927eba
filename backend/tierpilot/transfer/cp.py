"""`tierpilot cp`: copy files and prefixes to and from the gateway, in parallel, under a reservation."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import boto3
from boto3.s3.transfer import TransferConfig, create_transfer_manager
from botocore.config import Config
from rich.progress import BarColumn, DownloadColumn, Progress, TimeRemainingColumn, TransferSpeedColumn
from s3transfer.subscribers import BaseSubscriber

RESERVATION_HEADER = "X-Tierpilot-Reservation"


@dataclass(frozen=True)
class S3Path:
    bucket: str
    key: str


def parse_s3(uri: str) -> S3Path | None:
    """`s3://bucket/key` → S3Path; anything else is a local path (None)."""
    if not uri.startswith("s3://"):
        return None
    bucket, _, key = uri[5:].partition("/")
    if not bucket:
        raise ValueError(f"{uri!r}: no bucket")
    return S3Path(bucket, key)


def make_client(endpoint: str, reservation: str | None, concurrency: int) -> Any:
    client = boto3.client(
        "s3", endpoint_url=endpoint,
        config=Config(max_pool_connections=max(10, concurrency * 2), retries={"max_attempts": 5, "mode": "adaptive"},
                      s3={"addressing_style": "path"}),
    )
    if reservation:
        def _add_header(request: Any, **_: Any) -> None:
            request.headers[RESERVATION_HEADER] = reservation

        client.meta.events.register("before-sign.s3", _add_header)
    return client


def _local_files(src: Path) -> Iterator[tuple[Path, str]]:
    if src.is_file():
        yield src, src.name
        return
    for path in sorted(src.rglob("*")):
        if path.is_file():
            yield path, path.relative_to(src).as_posix()


def _remote_keys(client: Any, src: S3Path) -> Iterator[tuple[str, int]]:
    paginator = client.get_paginator("list_objects_v2")
    for page in paginator.paginate(Bucket=src.bucket, Prefix=src.key):
        for obj in page.get("Contents", []):
            yield obj["Key"], int(obj["Size"])


def copy(src: str, dst: str, *, endpoint: str, reservation: str | None = None, recursive: bool = False,
         concurrency: int = 8, part_size: int = 16 * 1024 * 1024, progress: bool = True) -> int:
    """Upload (local → s3://), download (s3:// → local) or copy; returns the number of bytes moved.

    Every file goes through one transfer manager, so ``concurrency`` requests are under way at once whether
    they are the parts of one large file or many small files (one after another, a 1 KiB file spent most of
    its time in the client's own round trip: 10,000 of them took 2-3× as long as ``aws s3 cp``).
    """
    s_src, s_dst = parse_s3(src), parse_s3(dst)
    if (s_src is None) == (s_dst is None) and s_src is None:
        raise ValueError("one side must be s3://bucket/key")
    client = make_client(endpoint, reservation, concurrency)
    # 8 MiB I/O chunks: with boto3's 256 KiB default a download spends ~3 CPU s/GiB in per-chunk tasks
    cfg = TransferConfig(multipart_threshold=part_size, multipart_chunksize=part_size, max_concurrency=concurrency,
                         io_chunksize=8 * 1024 * 1024)
    jobs: list[tuple[Job, int]] = []  # (what to submit to the manager, size)

    if s_src is None:
        assert s_dst is not None
        local = Path(src)
        if not local.exists():
            raise ValueError(f"{src}: no such file or directory")
        if local.is_dir() and not recursive:
            raise ValueError(f"{src} is a directory: use --recursive")
        for path, rel in _local_files(local):
            key = (s_dst.key.rstrip("/") + "/" + rel).lstrip("/") if (recursive or s_dst.key.endswith("/")
                                                                       or not s_dst.key) else s_dst.key
            jobs.append((_upload(path, s_dst.bucket, key), path.stat().st_size))
    elif s_dst is None:
        local = Path(dst)
        if recursive:
            for key, size in _remote_keys(client, s_src):
                rel = key[len(s_src.key):].lstrip("/") or Path(key).name
                jobs.append((_download(s_src.bucket, key, local / rel), size))
        else:
            size = int(client.head_object(Bucket=s_src.bucket, Key=s_src.key)["ContentLength"])
            target = local / Path(s_src.key).name if (local.is_dir() or dst.endswith("/")) else local
            jobs.append((_download(s_src.bucket, s_src.key, target), size))
    else:
        keys = list(_remote_keys(client, s_src)) if recursive else [(s_src.key, 0)]
        for key, size in keys:
            new_key = s_dst.key + key[len(s_src.key):] if recursive else s_dst.key
            jobs.append((_copy(s_src.bucket, key, s_dst.bucket, new_key), size))

    total = sum(size for _, size in jobs)
    with Progress("[progress.description]{task.description}", BarColumn(), DownloadColumn(),
                  TransferSpeedColumn(), TimeRemainingColumn(), disable=not progress) as bar, \
            create_transfer_manager(client, cfg) as manager:
        task = bar.add_task(f"{len(jobs)} file(s)", total=total or None)
        subscribers = [_Progress(lambda n: bar.advance(task, n))]
        # the manager bounds what it holds (max_submission_queue_size): submitting blocks, it does not pile up
        futures = [submit(manager, subscribers) for submit, _size in jobs]
        for future in futures:
            future.result()  # the first failure is raised; leaving the manager cancels the rest
    return total


Job = Callable[[Any, list[Any]], Any]


class _Progress(BaseSubscriber):  # type: ignore[misc]
    def __init__(self, advance: Callable[[int], object]) -> None:
        self._advance = advance

    def on_progress(self, future: Any, bytes_transferred: int, **kwargs: Any) -> None:
        self._advance(bytes_transferred)


def _upload(path: Path, bucket: str, key: str) -> Job:
    return lambda manager, subscribers: manager.upload(str(path), bucket, key, subscribers=subscribers)


def _copy(src_bucket: str, src_key: str, bucket: str, key: str) -> Job:
    return lambda manager, subscribers: manager.copy({"Bucket": src_bucket, "Key": src_key}, bucket, key,
                                                     subscribers=subscribers)


def _download(bucket: str, key: str, target: Path) -> Job:
    """A download to ``target`` (s3transfer writes a temporary file beside it and renames it when complete)."""
    def submit(manager: Any, subscribers: list[Any]) -> Any:
        target.parent.mkdir(parents=True, exist_ok=True)
        return manager.download(bucket, key, str(target), subscribers=subscribers)

    return submit
