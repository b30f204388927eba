"""`tierpilot mount BUCKET MOUNTPOINT`: the snapshot from the catalog, the user's keys from the environment."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import sys
import tempfile
import threading
from pathlib import Path

import typer

from tierpilot.kit.settings import get_settings


def _widen_readahead(mountpoint: Path, kib: int, stop: threading.Event) -> None:
    """Once mounted, let the kernel read ahead a block at a time (``read_ahead_kb`` of the mount's bdi; root only).

    FUSE mounts start at the kernel's 128 KiB: a sequential read is then one request into this process per
    128 KiB with one or two in flight, which on a loaded machine waits on scheduling more than on bytes
    (a 256 MiB read took ~3,000 requests, ~400 at 4 MiB). Without the right (not root) the 128 KiB stay.
    """
    while not os.path.ismount(mountpoint):
        if stop.wait(0.05):
            return
    dev = os.stat(mountpoint).st_dev
    with contextlib.suppress(OSError):
        Path(f"/sys/class/bdi/{os.major(dev)}:{os.minor(dev)}/read_ahead_kb").write_text(str(kib))


def mount(
    bucket: str = typer.Argument(..., help="bucket to show"),
    mountpoint: Path = typer.Argument(..., help="an empty directory"),
    prefix: str = typer.Option("", "--prefix", help="show only keys under this prefix (as the root)"),
    reservation: str | None = typer.Option(None, "--reservation", help="reservation id sent with every read"),
    endpoint: str | None = typer.Option(None, "--endpoint", help="gateway URL (default: the configured gateway)"),
    cache_mb: int = typer.Option(1024, "--cache-mb", min=8, help="on-disk block cache, MiB"),
    block_mb: int = typer.Option(4, "--block-mb", min=1, max=64, help="bytes per ranged read, MiB"),
    ahead_blocks: int = typer.Option(4, "--ahead-blocks", min=0, max=16, help="blocks loaded ahead of a "
                                     "sequential reader"),
    refresh_s: float = typer.Option(0.0, "--refresh-s", min=0, help="re-read the tree this often (0: only on "
                                    "SIGUSR1)"),
) -> None:
    """Mount BUCKET read-only at MOUNTPOINT (credentials from AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY);
    Ctrl-C or `fusermount3 -u MOUNTPOINT` unmounts and removes the cache."""
    import mfusepy

    from tierpilot.mount.fs import BlockCache, TierpilotFS
    from tierpilot.mount.snapshot import SnapshotError, snapshot
    from tierpilot.mount.tree import Tree
    from tierpilot.transfer.cp import make_client

    key, secret = os.environ.get("AWS_ACCESS_KEY_ID", ""), os.environ.get("AWS_SECRET_ACCESS_KEY", "")
    if not key or not secret:
        typer.echo("error: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (your tierpilot S3 keys)", err=True)
        raise typer.Exit(2)
    if not mountpoint.is_dir():
        typer.echo(f"error: {mountpoint} is not a directory", err=True)
        raise typer.Exit(2)

    def load() -> Tree:
        return snapshot(bucket, prefix, key, secret)

    try:
        load()
    except SnapshotError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from exc
    cache_dir = Path(tempfile.mkdtemp(prefix="tierpilot-mount-"))
    fs = None
    # SIGUSR1 refreshes: blocked in every thread (FUSE's too) and awaited by one
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGUSR1})
    stop = threading.Event()
    try:
        client = make_client(endpoint or get_settings().gateway_url, reservation, 8)
        fs = TierpilotFS(load, client, bucket, BlockCache(cache_dir, cache_mb << 20),
                         block=block_mb << 20, ahead=ahead_blocks)

        def on_signal() -> None:
            while not stop.is_set():
                if signal.sigwait({signal.SIGUSR1}) == signal.SIGUSR1 and not stop.is_set():
                    fs.refresh()

        def on_interval() -> None:
            while not stop.wait(refresh_s):
                fs.refresh()

        threading.Thread(target=on_signal, daemon=True, name="mount-sigusr1").start()
        threading.Thread(target=_widen_readahead, args=(mountpoint, block_mb << 10, stop), daemon=True,
                         name="mount-readahead").start()
        if refresh_s > 0:
            threading.Thread(target=on_interval, daemon=True, name="mount-refresh").start()
        print(f"mounted {bucket}/{prefix} at {mountpoint}", file=sys.stderr, flush=True)
        try:
            mfusepy.FUSE(fs, str(mountpoint), foreground=True, ro=True, fsname=f"tierpilot:{bucket}",
                         default_permissions=True)
        except RuntimeError as exc:
            if exc.args != (8,):  # libfuse's loop ended by a signal (Ctrl-C, TERM): a normal unmount
                raise
    finally:
        stop.set()
        if fs is not None:
            fs.close()
        shutil.rmtree(cache_dir, ignore_errors=True)
