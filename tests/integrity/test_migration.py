"""The fixity tables' migration on an installation with data."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from tierpilot.kit.migrate import upgrade


def test_upgrade_keeps_rows_and_fixity_checks_cascade_with_their_bucket(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    url = f"sqlite:///{path}"
    upgrade(url, "0016")
    with sqlite3.connect(path) as conn:
        conn.executescript("""
            INSERT INTO users (id, username, password_hash, is_admin, created_at)
                VALUES (1, 'a', 'x', 0, '2026-01-01');
            INSERT INTO tiers (id, name, driver, config, storage_classes, offline, restore_delays, price_ref,
                               min_storage_days, created_at)
                VALUES (1, 't', 'posix', '{}', '[]', 0, '{}', '{}', 0, '2026-01-01');
            INSERT INTO buckets (id, name, owner_id, tier_id, region, object_count, used_bytes, created_at)
                VALUES (3, 'b3', 1, 1, 'us-east-1', 1, 5, '2026-01-01');
        """)
    conn.close()
    upgrade(url)
    with sqlite3.connect(path) as conn:
        conn.execute("PRAGMA foreign_keys=ON")
        assert conn.execute("SELECT id, name FROM buckets").fetchall() == [(3, "b3")]
        conn.execute("INSERT INTO fixity_checks (run_id, bucket_id, object_id, key, version_id, tier_id, locator, "
                     "checked_at, result, algorithm, expected, size) VALUES ('r', 3, 9, 'k', 'null', 1, 'l', "
                     "'2026-01-02', 'ok', 'CRC64NVME', 'x', 5)")
        conn.execute("INSERT INTO fixity_cursors (tier_id, after_id, cycle_started_at, checked_in_cycle, updated_at) "
                     "VALUES (1, 9, '2026-01-02', 1, '2026-01-02')")
        conn.execute("DELETE FROM buckets WHERE id = 3")
        assert conn.execute("SELECT count(*) FROM fixity_checks").fetchone() == (0,)
        assert conn.execute("PRAGMA foreign_key_check").fetchall() == []
    conn.close()
