"""One blob judged against what the catalog recorded: whole-object and COMPOSITE checksums, ETags, sizes."""

from __future__ import annotations

import base64
import hashlib

from tierpilot.catalog.service import multipart_etag
from tierpilot.drivers.checksums import checksum_b64, new_digest
from tierpilot.integrity.fixity import Expected, check
from tierpilot.integrity.service import Pacer

DATA = bytes(range(256)) * 100


def _chunks(data: bytes, n: int = 1000) -> list[bytes]:
    return [data[i:i + n] for i in range(0, len(data), n)]


def test_whole_object_checksum_passes_and_a_flipped_byte_fails() -> None:
    value = checksum_b64("CRC64NVME", DATA)
    exp = Expected(size=len(DATA), etag="x", checksum_algorithm="CRC64NVME", checksum_value=value)
    assert check(_chunks(DATA), exp).result == "ok"
    bad = bytearray(DATA)
    bad[5000] ^= 1
    verdict = check(_chunks(bytes(bad)), exp)
    assert (verdict.result, verdict.algorithm, verdict.expected) == ("mismatch", "CRC64NVME", value)
    assert verdict.found != value


def test_composite_checksum_is_recomputed_from_the_parts_bytes_at_their_sizes() -> None:
    sizes = [10_000, 10_000, len(DATA) - 20_000]
    parts = [DATA[:10_000], DATA[10_000:20_000], DATA[20_000:]]
    outer = new_digest("SHA256")
    for p in parts:
        outer.update(hashlib.sha256(p).digest())
    value = f"{base64.b64encode(outer.digest()).decode()}-3"
    exp = Expected(size=len(DATA), etag="e-3", checksum_algorithm="SHA256", checksum_value=value, part_sizes=sizes)
    assert check(_chunks(DATA, 3333), exp).result == "ok"  # chunks straddle part boundaries
    assert check(_chunks(DATA[::-1], 3333), exp).result == "mismatch"


def test_etag_is_checked_when_there_is_no_checksum_and_a_checksum_is_given_back() -> None:
    exp = Expected(size=len(DATA), etag=hashlib.md5(DATA).hexdigest())
    verdict = check(_chunks(DATA), exp)
    assert (verdict.result, verdict.algorithm) == ("ok", "MD5")
    assert verdict.backfill == ("CRC64NVME", checksum_b64("CRC64NVME", DATA))
    sizes = [12_000, len(DATA) - 12_000]
    etag = multipart_etag([hashlib.md5(DATA[:12_000]).hexdigest(), hashlib.md5(DATA[12_000:]).hexdigest()])
    assert check(_chunks(DATA), Expected(size=len(DATA), etag=etag, part_sizes=sizes)).result == "ok"
    wrong = check(_chunks(DATA), Expected(size=len(DATA), etag=hashlib.md5(b"other").hexdigest()))
    assert wrong.result == "mismatch" and wrong.backfill is None


def test_a_short_blob_is_a_size_mismatch() -> None:
    verdict = check(_chunks(DATA[:-1]), Expected(size=len(DATA), etag=hashlib.md5(DATA).hexdigest()))
    assert (verdict.result, verdict.algorithm, verdict.expected, verdict.found) == (
        "mismatch", "SIZE", str(len(DATA)), str(len(DATA) - 1))


def test_pacer_holds_bytes_and_objects_to_their_rates() -> None:
    now = [0.0]
    slept: list[float] = []

    def sleep(s: float) -> None:
        slept.append(s)
        now[0] += s

    pacer = Pacer(1000, 10, clock=lambda: now[0], sleep=sleep)
    pacer.object()
    pacer.read(2000)  # 2 s worth of bytes
    pacer.object()
    assert abs(now[0] - 2.0) < 1e-9
    for _ in range(30):
        pacer.object()  # 32 objects: 3.2 s at 10/s
    assert abs(now[0] - 3.2) < 1e-9
