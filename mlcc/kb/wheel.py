"""What a remote wheel holds, read without downloading it whole.

A wheel is a zip file. HTTP range requests on its URL read the end-of-central-directory
record, then the central directory (every member's name and size: the shared libraries a
wheel bundles, with their sonames), and then single small members such as
``torch/version.py`` (``cuda = '10.0.130'``). PEP 658 / 714 publish a wheel's METADATA next
to it (``<url>.metadata``): its ``Requires-Dist`` lines name the nvidia-* runtime wheels
newer builds depend on. ``mlcc kb check`` uses both to check a recipe's ``bundles:`` claim.

Answers are cached on disk like the index client's (one JSON file per question), so a
second run makes no request. Only the standard library speaks HTTP here.
"""

from __future__ import annotations

import hashlib
import json
import os
import struct
import time
import zlib
from email.parser import HeaderParser
from typing import Any, Dict, List, NamedTuple, Optional, Tuple

from mlcc.errors import IndexUnreachable
from mlcc.kb.index import (
    DEFAULT_TTL,
    MAX_FILE_BYTES,
    MAX_PAGE_BYTES,
    index_cache_dir,
    read_url,
    without_credentials,
)

WHEEL_CACHE_FORMAT = 1
TAIL_BYTES = 65536 + 22  # the EOCD record sits in the last 64 KiB + its own 22 bytes
MAX_MEMBER_BYTES = 1 << 20  # members read whole are small text files, never libraries
EOCD = b"PK\x05\x06"
ZIP64_LOCATOR = b"PK\x06\x07"
ZIP64_EOCD = b"PK\x06\x06"
CENTRAL = b"PK\x01\x02"
LOCAL = b"PK\x03\x04"


class Member(NamedTuple):
    name: str
    size: int  # uncompressed
    compressed: int
    method: int  # 0 stored, 8 deflate
    offset: int  # of the local header


class WheelReader:
    """Reads the member list, single members and PEP 658 metadata of wheels by URL."""

    def __init__(
        self,
        *,
        cache: Optional[str] = None,
        ttl: float = DEFAULT_TTL,
        refresh: bool = False,
        timeout: float = 60.0,
    ) -> None:
        self.cache = cache if cache is not None else os.path.join(index_cache_dir(), "wheels")
        self.ttl = ttl
        self.refresh = refresh
        self.timeout = timeout
        self.requests = 0
        self._members: Dict[str, Tuple[Member, ...]] = {}

    # public --------------------------------------------------------------------

    def names(self, url: str) -> Tuple[str, ...]:
        """Every member name of the wheel at ``url``."""
        cached = self._cached("names", url)
        if isinstance(cached, list):
            return tuple(str(n) for n in cached)
        names = tuple(m.name for m in self._central(url))
        self._store("names", url, list(names))
        return names

    def member(self, url: str, name: str) -> Optional[str]:
        """The text of one small member (None when the wheel has no such member)."""
        key = f"{url}#{name}"
        cached = self._cached("member", key)
        if isinstance(cached, dict):
            value = cached.get("text")
            return value if isinstance(value, str) else None
        found = [m for m in self._central(url) if m.name == name]
        text = self._read_member(url, found[0]).decode("utf-8", errors="replace") if found else None
        self._store("member", key, {"text": text})
        return text

    def requires_dist(self, url: str) -> Optional[Tuple[str, ...]]:
        """The wheel's Requires-Dist lines: from its PEP 658 metadata file, else from the
        METADATA member inside it (None: the wheel has none)."""
        cached = self._cached("metadata", url)
        if isinstance(cached, dict):
            value = cached.get("requires")
            return tuple(str(v) for v in value) if isinstance(value, list) else None
        body = self._get(url + ".metadata")
        if body is None:  # uploaded before PEP 658: the same file inside the wheel
            found = [m for m in self._central(url) if m.name.endswith(".dist-info/METADATA")]
            body = self._read_member(url, found[0]) if found else None
        requires: Optional[List[str]] = None
        if body is not None:
            headers = HeaderParser().parsestr(body.decode("utf-8", errors="replace"))
            requires = [str(v) for v in headers.get_all("Requires-Dist") or []]
        self._store("metadata", url, {"requires": requires})
        return tuple(requires) if requires is not None else None

    # zip -----------------------------------------------------------------------

    def _central(self, url: str) -> Tuple[Member, ...]:
        if url in self._members:
            return self._members[url]
        tail = self._ranged(url, f"bytes=-{TAIL_BYTES}")  # a suffix range: no HEAD first
        at = tail.rfind(EOCD)
        if at < 0:
            raise IndexUnreachable(url, "not a zip file (no end-of-central-directory record)")
        count, cd_size, cd_offset = struct.unpack("<HII", tail[at + 10 : at + 20])
        locator = tail.rfind(ZIP64_LOCATOR, 0, at)
        if locator >= 0:  # zip64: wheels over 4 GiB or with more than 65535 members
            (zip64_offset,) = struct.unpack("<Q", tail[locator + 8 : locator + 16])
            record = self._range(url, zip64_offset, zip64_offset + 55)
            if record[:4] == ZIP64_EOCD:
                count, cd_size, cd_offset = struct.unpack("<QQQ", record[32:56])
        directory = self._range(url, cd_offset, cd_offset + cd_size - 1)
        members = tuple(_parse_central(directory, count))
        self._members[url] = members
        return members

    def _read_member(self, url: str, member: Member) -> bytes:
        if member.size > MAX_MEMBER_BYTES:
            raise IndexUnreachable(url, f"{member.name} is {member.size} bytes: only small members are read")
        header = self._range(url, member.offset, member.offset + 29)
        if header[:4] != LOCAL:
            raise IndexUnreachable(url, f"no local header for {member.name}")
        name_len, extra_len = struct.unpack("<HH", header[26:30])
        start = member.offset + 30 + name_len + extra_len
        data = self._range(url, start, start + member.compressed - 1) if member.compressed else b""
        if member.method == 8:
            return zlib.decompress(data, -15)
        if member.method == 0:
            return data
        raise IndexUnreachable(url, f"{member.name}: zip method {member.method} is not read here")

    # http ----------------------------------------------------------------------

    def _range(self, url: str, first: int, last: int) -> bytes:
        return self._ranged(url, f"bytes={first}-{last}")

    def _ranged(self, url: str, spec: str) -> bytes:
        self.requests += 1
        fetched = read_url(url, timeout=self.timeout, limit=MAX_FILE_BYTES, headers={"Range": spec})
        if fetched is None or fetched.status != 206:
            raise IndexUnreachable(without_credentials(url), "the server ignores range requests")
        return fetched.body

    def _get(self, url: str) -> Optional[bytes]:
        self.requests += 1
        fetched = read_url(url, timeout=self.timeout, limit=MAX_PAGE_BYTES)
        return None if fetched is None else fetched.body

    # cache ---------------------------------------------------------------------

    def _cache_file(self, kind: str, key: str) -> str:
        return os.path.join(self.cache, hashlib.sha256(f"{kind}\n{key}".encode()).hexdigest()[:32] + ".json")

    def _cached(self, kind: str, key: str) -> Any:
        if self.refresh or not self.cache:
            return None
        try:
            with open(self._cache_file(kind, key), encoding="utf-8") as handle:
                data = json.load(handle)
        except (OSError, ValueError):
            return None
        if (
            not isinstance(data, dict)
            or data.get("format") != WHEEL_CACHE_FORMAT
            or data.get("key") != key
            or time.time() - float(data.get("fetched", 0)) > self.ttl
        ):
            return None
        return data.get("value")

    def _store(self, kind: str, key: str, value: Any) -> None:
        if not self.cache:
            return
        path = self._cache_file(kind, key)
        try:
            os.makedirs(self.cache, mode=0o700, exist_ok=True)
            tmp = f"{path}.{os.getpid()}.tmp"
            with open(tmp, "w", encoding="utf-8") as handle:
                json.dump(
                    {"format": WHEEL_CACHE_FORMAT, "key": key, "fetched": time.time(), "value": value}, handle
                )
            os.replace(tmp, path)
        except OSError:
            return  # a read-only cache only costs time


def _parse_central(directory: bytes, count: int) -> List[Member]:
    members: List[Member] = []
    at = 0
    while at + 46 <= len(directory) and directory[at : at + 4] == CENTRAL and len(members) < count:
        method = struct.unpack("<H", directory[at + 10 : at + 12])[0]
        compressed, size = struct.unpack("<II", directory[at + 20 : at + 28])
        name_len, extra_len, comment_len = struct.unpack("<HHH", directory[at + 28 : at + 34])
        (offset,) = struct.unpack("<I", directory[at + 42 : at + 46])
        name = directory[at + 46 : at + 46 + name_len].decode("utf-8", errors="replace")
        extra = directory[at + 46 + name_len : at + 46 + name_len + extra_len]
        size, compressed, offset = _zip64_sizes(extra, size, compressed, offset)
        members.append(Member(name, size, compressed, method, offset))
        at += 46 + name_len + extra_len + comment_len
    return members


def _zip64_sizes(extra: bytes, size: int, compressed: int, offset: int) -> Tuple[int, int, int]:
    """Fields set to 0xFFFFFFFF live in the zip64 extra block, in this order."""
    at = 0
    while at + 4 <= len(extra):
        tag, length = struct.unpack("<HH", extra[at : at + 4])
        if tag == 1:
            values = list(struct.unpack(f"<{length // 8}Q", extra[at + 4 : at + 4 + (length // 8) * 8]))
            if size == 0xFFFFFFFF and values:
                size = values.pop(0)
            if compressed == 0xFFFFFFFF and values:
                compressed = values.pop(0)
            if offset == 0xFFFFFFFF and values:
                offset = values.pop(0)
            break
        at += 4 + length
    return size, compressed, offset
