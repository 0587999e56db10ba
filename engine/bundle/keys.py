"""Seal signatures: an Ed25519 key that says who sealed a bundle.

``marathon keys init`` makes the key: ``<state dir>/keys/seal-ed25519.pem`` (PKCS#8 PEM,
mode 0600; the state directory as in :mod:`engine.bundle.journal`) and prints the public key, 64
hex characters, to publish. While the key exists, every seal signs the bundle: the
manifest gains ``signature`` = ``{"alg": "ed25519", "public_key": <hex>, "value": <hex>}``,
a signature over ``b"sre-marathon-bundle-head:" + head`` (the seal event's hash, which
covers every event and, through the seal event's files digest, every file).
``marathon verify --trust KEY`` checks that the signature is valid and the public key is
KEY (hex, or a file holding it). Ed25519 signatures are deterministic, so the same run still
seals to the same bytes.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from engine.bundle.journal import state_dir

SIGNED_PREFIX = b"sre-marathon-bundle-head:"
_HEX64 = re.compile(r"^[0-9a-f]{64}$")


class SigningKeyError(ValueError):
    """A key that cannot be made, read or parsed (the message names the file)."""


def key_path() -> Path:
    return state_dir() / "keys" / "seal-ed25519.pem"


def init_key(force: bool = False) -> str:
    """Make the sealing key; returns its public key (hex).

    Raises:
        SigningKeyError: a key exists already (without ``force``) or cannot be written.
    """
    path = key_path()
    existing = load_private() if path.exists() else None
    if existing is not None and not force:
        raise SigningKeyError(f"{path} exists already (public key {public_hex(existing)}); --force replaces it")
    key = Ed25519PrivateKey.generate()
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                            serialization.NoEncryption())
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        os.chmod(path.parent, 0o700)
        tmp = path.with_suffix(".tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "wb") as fh:
            fh.write(pem)
        os.replace(tmp, path)
    except OSError as exc:
        raise SigningKeyError(f"{path}: cannot write the key ({exc.strerror or exc})") from None
    return public_hex(key)


def load_private() -> Ed25519PrivateKey | None:
    """The sealing key, or None when ``marathon keys init`` has not been run.

    Raises:
        SigningKeyError: the file exists but is not an Ed25519 private key.
    """
    path = key_path()
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise SigningKeyError(f"{path}: cannot read the key ({exc.strerror or exc})") from None
    try:
        key = serialization.load_pem_private_key(data, password=None)
    except (ValueError, TypeError) as exc:
        raise SigningKeyError(f"{path}: not a PEM private key ({exc})") from None
    if not isinstance(key, Ed25519PrivateKey):
        raise SigningKeyError(f"{path}: not an Ed25519 key")
    return key


def public_hex(key: Ed25519PrivateKey) -> str:
    return key.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw).hex()


def sign_head(key: Ed25519PrivateKey, head: str) -> dict[str, Any]:
    """The manifest's ``signature`` entry for a seal event hash."""
    return {"alg": "ed25519", "public_key": public_hex(key), "value": key.sign(SIGNED_PREFIX + head.encode()).hex()}


def check_signature(sig: Any, head: str) -> str | None:
    """What is wrong with a manifest ``signature`` entry for ``head`` (None: valid)."""
    if not isinstance(sig, dict) or set(sig) != {"alg", "public_key", "value"} or sig.get("alg") != "ed25519":
        return "signature is not {alg: ed25519, public_key, value}"
    pub, value = sig["public_key"], sig["value"]
    if not (isinstance(pub, str) and _HEX64.match(pub)) or not (isinstance(value, str)
                                                                and re.fullmatch(r"[0-9a-f]{128}", value)):
        return "signature public_key or value is not hex of the right length"
    try:
        Ed25519PublicKey.from_public_bytes(bytes.fromhex(pub)).verify(bytes.fromhex(value),
                                                                      SIGNED_PREFIX + head.encode())
    except (InvalidSignature, ValueError):
        return f"the signature by {pub[:16]}... does not match the head {head[:16]}..."
    return None


def trusted_key(spec: str) -> str:
    """A trusted public key from ``--trust``: 64 hex characters, or a file holding them.

    Raises:
        SigningKeyError: neither.
    """
    text = spec.strip().lower()
    if _HEX64.match(text):
        return text
    try:
        text = Path(spec).read_text(encoding="utf-8").strip().lower()
    except (OSError, UnicodeDecodeError):
        raise SigningKeyError(f"--trust {spec!r}: neither 64 hex characters nor a readable file holding them") from None
    if not _HEX64.match(text):
        raise SigningKeyError(f"--trust {spec}: the file does not hold a 64-hex-character Ed25519 public key")
    return text
