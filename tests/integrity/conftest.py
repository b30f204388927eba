"""Integrity fixtures: the gateway tests' real gateway process (three posix tiers), and the blob files behind a
bucket's objects, to damage them behind tierpilot's back."""

from __future__ import annotations

from pathlib import Path

from tests.gateway.conftest import Gateway, bucket, gateway, s3  # noqa: F401  (the gateway tests' fixtures)


def blob_file(gw: Gateway, data: bytes, tier: str = "hot-disk") -> Path:
    """The posix blob file holding exactly ``data`` (tests write distinct bytes per object)."""
    found = [p for p in (gw.tier_dirs[tier] / "blobs").rglob("f_*") if p.is_file() and p.read_bytes() == data]
    assert len(found) == 1, found
    return found[0]


def flip_byte(path: Path, at: int = 0) -> None:
    raw = bytearray(path.read_bytes())
    raw[at] ^= 0x01
    path.write_bytes(bytes(raw))
