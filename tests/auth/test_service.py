from __future__ import annotations

import pytest
from sqlalchemy.orm import Session

from tierpilot.auth import service
from tierpilot.kit.errors import Conflict, Invalid, Unauthorized


def test_passwords_are_hashed_with_argon2(session: Session) -> None:
    user, _ = service.create_user(session, "alice", "correct horse")
    assert user.password_hash.startswith("$argon2")
    assert "correct horse" not in user.password_hash


def test_authenticate_accepts_right_and_refuses_wrong_password(session: Session) -> None:
    service.create_user(session, "bob", "bob-password")
    assert service.authenticate(session, "bob", "bob-password").username == "bob"
    with pytest.raises(Unauthorized):
        service.authenticate(session, "bob", "wrong-password")


def test_duplicate_and_invalid_users_are_refused(session: Session) -> None:
    service.create_user(session, "dave", "dave-password")
    with pytest.raises(Conflict):
        service.create_user(session, "dave", "dave-password")
    with pytest.raises(Invalid):
        service.create_user(session, "eve", "short")
    with pytest.raises(Invalid):
        service.create_user(session, "../eve", "long-enough-pw")


def test_secret_is_encrypted_at_rest(session: Session) -> None:
    _, key = service.create_user(session, "frank", "frank-password")
    assert key.secret_access_key not in key.created.secret_encrypted
    cred = service.credential_for(session, key.access_key_id)
    assert cred is not None and cred.secret_access_key == key.secret_access_key
    assert service.credential_for(session, "TPUNKNOWN") is None
