"""An installation with users and buckets upgraded to projects: each user gets a personal project holding the
buckets they own, its quota counter at what they store; nothing else changes."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from tierpilot.kit.migrate import upgrade


def test_upgrade_gives_each_user_a_personal_project_with_their_buckets(tmp_path: Path) -> None:
    path = tmp_path / "before-projects.db"
    url = f"sqlite:///{path}"
    upgrade(url, "0017")
    with sqlite3.connect(path) as conn:
        conn.executescript("""
            INSERT INTO users (id, username, password_hash, is_admin, created_at)
                VALUES (1, 'ana', 'x', 1, '2026-01-01'), (4, 'ben', 'x', 0, '2026-01-01'),
                       (6, 'cy', 'x', 0, '2026-01-01');
            INSERT INTO tiers (id, name, driver, config, storage_classes, offline, restore_delays, price_ref,
                               min_storage_days, created_at)
                VALUES (1, 't', 'posix', '{}', '[]', 0, '{}', '{}', 0, '2026-01-01');
            INSERT INTO buckets (id, name, owner_id, tier_id, region, object_count, used_bytes, created_at)
                VALUES (3, 'ana-1', 1, 1, 'us-east-1', 2, 300, '2026-01-01'),
                       (5, 'ben-1', 4, 1, 'us-east-1', 1, 70, '2026-01-01'),
                       (8, 'ben-2', 4, 1, 'us-east-1', 4, 30, '2026-01-01');
        """)
    conn.close()
    upgrade(url)
    with sqlite3.connect(path) as conn:
        conn.execute("PRAGMA foreign_keys=ON")
        projects = conn.execute("SELECT id, name, personal_user_id, counted_bytes, counted_objects, quota_bytes "
                                "FROM projects ORDER BY personal_user_id").fetchall()
        assert [p[1:] for p in projects] == [("~ana", 1, 300, 2, None), ("~ben", 4, 100, 5, None),
                                             ("~cy", 6, 0, 0, None)]
        by_user = {p[2]: p[0] for p in projects}
        assert conn.execute("SELECT name, project_id FROM buckets ORDER BY id").fetchall() == [
            ("ana-1", by_user[1]), ("ben-1", by_user[4]), ("ben-2", by_user[4])]
        assert conn.execute("SELECT project_id, user_id, role, is_default FROM project_members ORDER BY user_id"
                            ).fetchall() == [(by_user[1], 1, "manager", 0), (by_user[4], 4, "manager", 0),
                                             (by_user[6], 6, "manager", 0)]
        assert conn.execute("SELECT id, name, owner_id, used_bytes FROM buckets ORDER BY id").fetchall() == [
            (3, "ana-1", 1, 300), (5, "ben-1", 4, 70), (8, "ben-2", 4, 30)]
        assert conn.execute("PRAGMA foreign_key_check").fetchall() == []
        ddl = conn.execute("SELECT sql FROM sqlite_master WHERE name = 'buckets'").fetchone()[0]
        assert "AUTOINCREMENT" in ddl  # the table was not recreated: ids are still never reused
    conn.close()
