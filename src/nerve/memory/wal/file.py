"""The WAL's bytes on disk (ME-8): segment headers, frames, encryption, durable file steps.

    header  b"NERVEWAL" version:u8 flags:u8 seq:u64 salt:16 [nonce:12 check:25] crc32:u32
    frame   length:u32 crc32:u32 payload          (little-endian; the crc covers the payload
                                                   as stored, i.e. encrypted when encrypted)

Encryption (a 32-byte key): AES-GCM, not Fernet. Both come from `cryptography`; AES-GCM costs 28
bytes a frame (nonce and tag) where Fernet adds ~57 bytes plus a third for base64, and it makes
one AES-NI pass where Fernet runs AES-CBC and then HMAC. Each segment derives its own key from
the master key and its random salt (HKDF-SHA256), so random 96-bit nonces stay far below their
collision bound; a frame's offset is its associated data, so frames cannot be moved around. The
header's check value, encrypted under that key, tells a wrong key from a torn frame.
"""

from __future__ import annotations

import logging
import os
import struct
import zlib
from pathlib import Path

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.hashes import SHA256
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from nerve.errors import ConfigError, WalError

__all__ = [
    "MAX_FRAME",
    "WalError",
    "create_file",
    "encode_frames",
    "fdatasync",
    "fsync_dir",
    "make_header",
    "read_frames",
    "read_header",
    "write_all",
]

log = logging.getLogger("nerve.memory.wal")

MAGIC = b"NERVEWAL"
VERSION = 1
MAX_FRAME = 1 << 30
_HEAD = struct.Struct("<8sBBQ16s")
_FRAME = struct.Struct("<II")
_U32 = struct.Struct("<I")
_U64 = struct.Struct("<Q")
_CHECK = b"nerve-wal"
_CHECK_LEN = 12 + len(_CHECK) + 16
_ENCRYPTED = 1
fdatasync = getattr(os, "fdatasync", os.fsync)


def write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def create_file(path: Path, data: bytes) -> None:
    """`path` holding `data`, or no `path` at all, whatever the crash (temp file, fsync,
    rename, fsync the directory)."""
    tmp = path.with_name(path.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        write_all(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)
    os.rename(tmp, path)
    fsync_dir(path.parent)


def _cipher(key: bytes | None, salt: bytes) -> AESGCM | None:
    if key is None:
        return None
    hkdf = HKDF(algorithm=SHA256(), length=32, salt=salt, info=b"nerve-wal-segment")
    return AESGCM(hkdf.derive(key))


def make_header(seq: int, key: bytes | None) -> tuple[bytes, AESGCM | None]:
    """A new segment's header and the cipher for its frames (None: not encrypted)."""
    salt = os.urandom(16)
    cipher = _cipher(key, salt)
    head = _HEAD.pack(MAGIC, VERSION, _ENCRYPTED if cipher else 0, seq, salt)
    if cipher is not None:
        nonce = os.urandom(12)
        head += nonce + cipher.encrypt(nonce, _CHECK, head)
    return head + _U32.pack(zlib.crc32(head)), cipher


def read_header(file: Path, key: bytes | None) -> tuple[int, AESGCM | None, int]:
    """(seq, cipher, header length) of a segment; ConfigError for a missing or wrong key."""
    with file.open("rb") as handle:
        head = handle.read(_HEAD.size + _CHECK_LEN + 4)
    if len(head) < _HEAD.size + 4 or not head.startswith(MAGIC):
        raise WalError(f"{file} is not a nerve write-ahead log, or its header is damaged")
    _, version, flags, seq, salt = _HEAD.unpack_from(head)
    size = _HEAD.size + (_CHECK_LEN if flags & _ENCRYPTED else 0)
    if version != VERSION or len(head) < size + 4:
        raise WalError(f"{file}: unsupported WAL version {version} or a damaged header")
    if zlib.crc32(head[:size]) != _U32.unpack_from(head, size)[0]:
        raise WalError(f"{file}: the WAL header is damaged (bad checksum)")
    if not flags & _ENCRYPTED:
        if key is not None:
            log.warning("WAL %s was written without encryption; replaying it as it is", file)
        return seq, None, size + 4
    cipher = _cipher(key, salt)
    if cipher is None:
        raise ConfigError(
            f"{file} is encrypted: set $NERVE_WAL_KEY to the key it was written with",
            path="memory.wal.encrypt",
        )
    try:
        cipher.decrypt(
            head[_HEAD.size : _HEAD.size + 12], head[_HEAD.size + 12 : size], head[: _HEAD.size]
        )
    except InvalidTag:
        raise ConfigError(
            f"{file} was written with a different key than the one in $NERVE_WAL_KEY",
            path="memory.wal.encrypt",
        ) from None
    return seq, cipher, size + 4


def encode_frames(payloads: list[bytes], cipher: AESGCM | None, offset: int) -> bytes:
    """Frames for `payloads`, the first to be written at `offset`."""
    parts: list[bytes] = []
    for payload in payloads:
        stored = payload
        if cipher is not None:
            nonce = os.urandom(12)
            stored = nonce + cipher.encrypt(nonce, payload, _U64.pack(offset))
        parts += (_FRAME.pack(len(stored), zlib.crc32(stored)), stored)
        offset += _FRAME.size + len(stored)
    return b"".join(parts)


def _torn(data: bytes, offset: int, cipher: AESGCM | None) -> tuple[str, bytes, int]:
    """(why the frame at `offset` is torn or "", its payload, where the next one starts)."""
    if len(data) - offset < _FRAME.size:
        return "a partial frame header", b"", 0
    length, crc = _FRAME.unpack_from(data, offset)
    end = offset + _FRAME.size + length
    stored = data[offset + _FRAME.size : end]
    if length == 0 or end > len(data):
        return "a frame cut short", b"", 0
    if zlib.crc32(stored) != crc:
        return "a frame with a bad checksum", b"", 0
    if cipher is not None:
        try:
            stored = cipher.decrypt(stored[:12], stored[12:], _U64.pack(offset))
        except InvalidTag:
            return "a frame that does not decrypt", b"", 0
    return "", stored, end


def read_frames(file: Path, cipher: AESGCM | None, start: int) -> list[bytes]:
    """The payloads of a segment whose frames begin at `start`. A torn tail is logged with its
    offset and truncated: it only ever holds writes that were not acknowledged."""
    data = file.read_bytes()
    payloads: list[bytes] = []
    offset = start
    while offset < len(data):
        why, payload, end = _torn(data, offset, cipher)
        if why:
            log.warning(
                "WAL %s: %s at offset %d; truncating the last %d bytes (a torn write, "
                "never acknowledged)", file, why, offset, len(data) - offset,
            )  # fmt: skip
            fd = os.open(file, os.O_WRONLY)
            try:
                os.ftruncate(fd, offset)
                os.fsync(fd)
            finally:
                os.close(fd)
            break
        payloads.append(payload)
        offset = end
    return payloads
