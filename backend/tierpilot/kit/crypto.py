"""Secrets at rest: S3 secret keys and webhook signing secrets (signing needs the plain secret) are
encrypted with the app key."""

from __future__ import annotations

import base64
import hashlib

from cryptography.fernet import Fernet, InvalidToken

from tierpilot.kit.settings import get_settings


def _fernet() -> Fernet:
    digest = hashlib.sha256(("tierpilot-at-rest:" + get_settings().secret_key).encode()).digest()
    return Fernet(base64.urlsafe_b64encode(digest))


def encrypt(plain: str) -> str:
    return _fernet().encrypt(plain.encode()).decode()


def decrypt(token: str) -> str:
    try:
        return _fernet().decrypt(token.encode()).decode()
    except InvalidToken as exc:
        raise ValueError("secret cannot be decrypted: TIERPILOT_SECRET_KEY changed?") from exc
