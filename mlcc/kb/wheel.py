"""What a remote wheel holds, read without downloading it whole.

A wheel is a zip file. HTTP range requests on its URL read the end-of-central-directory
record, then the central directory (every member's name and size: the shared libraries a
wheel bundles, with their sonames), and then single small members such as
``torch/version.py`` (``cuda = '10.0.130'``). PEP 658 / 714 publish a wheel's METADATA next
to it (``<url>.metadata``): its ``Requires-Dist`` lines name the nvidia-* runtime wheels
newer builds depend on. ``mlcc kb check`` uses both to check a recipe's ``bundles:`` claim.

The libraries a shared object loads from the system are the DT_NEEDED entries of its ELF
dynamic section, read with pyelftools' structures (see :func:`_dt_needed_entries`). The
dynamic section of a large library sits near its end (after the code and the GPU binaries)
and a deflated zip member cannot be entered in the middle, so the member is streamed
through the decompressor into a temporary file, by range requests of bounded size, up to a
size limit and a deadline; only the sonames are kept.

Answers are cached on disk like the index client's (one JSON file per question), so a
second run makes no request. Only the standard library speaks HTTP here.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import struct
import tempfile
import time
import zlib
from email.parser import HeaderParser
from typing import Any, Dict, Iterator, List, NamedTuple, Optional, Tuple

from elftools.common.exceptions import ELFError
from elftools.common.utils import struct_parse
from elftools.elf.elffile import ELFFile

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
# A PEP 658 metadata file is a wheel's METADATA: tens of KB, a long description at most a few
# MB; parsing 60 MB of headers takes minutes
MAX_METADATA_BYTES = 4 * 1024 * 1024
MAX_MEMBERS = 200_000  # central directory entries (torch's wheels hold ~12,000)
INFLATE_STEP = 4 * 1024 * 1024  # bytes one decompress call may produce
# The dynamic section of a real library names tens of libraries; a soname is a file name
MAX_NEEDED = 1024
MAX_DYNAMIC_ENTRIES = 65536
MAX_SONAME = 255
EOCD = b"PK\x05\x06"
ZIP64_LOCATOR = b"PK\x06\x07"
ZIP64_EOCD = b"PK\x06\x06"
CENTRAL = b"PK\x01\x02"
LOCAL = b"PK\x03\x04"
# A framework's main library is large (libmxnet.so of mxnet-cu110 1.8.0 is 313 MB deflated,
# 667 MB inflated); larger members are left unread and said so
MAX_LIBRARY_BYTES = 512 * 1024 * 1024  # deflated, as downloaded
MAX_LIBRARY_SIZE = 2 * 1024 * 1024 * 1024  # inflated, as written to the temporary file
LIBRARY_CHUNK = 32 * 1024 * 1024  # one range request
LIBRARY_DEADLINE = 600.0  # seconds for one member, all its range requests together
SHARED_LIBRARY = re.compile(r"\.so(?:\.[0-9]+)*$")


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
        body = self._get(url + ".metadata", limit=MAX_METADATA_BYTES)
        if body is None:  # uploaded before PEP 658: the same file inside the wheel
            found = [m for m in self._central(url) if m.name.endswith(".dist-info/METADATA")]
            body = self._read_member(url, found[0]) if found else None
        requires: Optional[List[str]] = None
        if body is not None:
            headers = HeaderParser().parsestr(body.decode("utf-8", errors="replace"))
            requires = [str(v) for v in headers.get_all("Requires-Dist") or []]
        self._store("metadata", url, {"requires": requires})
        return tuple(requires) if requires is not None else None

    def needed(self, url: str, names: Tuple[str, ...]) -> Dict[str, List[str]]:
        """The DT_NEEDED sonames of each of the shared libraries ``names`` in the wheel.

        A member that is not an ELF shared object maps to an empty list; one over
        :data:`MAX_LIBRARY_BYTES` (or that cannot be read in time) is left out, with the
        reason under the key ``"<member> (not read)"``.
        """
        key = f"{url}#needed:" + ",".join(names)
        cached = self._cached("needed", key)
        if isinstance(cached, dict):
            return {str(k): [str(v) for v in vs] for k, vs in cached.items() if isinstance(vs, list)}
        found: Dict[str, List[str]] = {}
        failed = False
        members = {m.name: m for m in self._central(url)}
        for name in names:
            member = members.get(name)
            if member is None:
                continue
            if member.compressed > MAX_LIBRARY_BYTES:
                found[f"{name} (not read)"] = [
                    f"{member.compressed} bytes deflated, over {MAX_LIBRARY_BYTES}"
                ]
                continue
            if member.size > MAX_LIBRARY_SIZE:
                found[f"{name} (not read)"] = [f"{member.size} bytes inflated, over {MAX_LIBRARY_SIZE}"]
                continue
            try:
                found[name] = self._dt_needed(url, member)
            except IndexUnreachable as exc:
                found[f"{name} (not read)"] = [exc.message.rsplit(": ", 1)[-1]]
                failed = True
        if not failed:  # a failed read (the network, a deadline) is tried again next time
            self._store("needed", key, found)
        return found

    def _dt_needed(self, url: str, member: Member) -> List[str]:
        with tempfile.TemporaryFile() as spool:
            self._spool_member(url, member, spool)
            spool.seek(0)
            if spool.read(4) != b"\x7fELF":
                return []  # named like a library, but a linker script or a stub
            try:
                return _dt_needed_entries(ELFFile(spool), spool)
            except (ELFError, ValueError, OSError) as exc:  # offsets past the file, a negative seek
                raise IndexUnreachable(url, f"{member.name}: an ELF object not read ({exc})") from None

    def _spool_member(self, url: str, member: Member, out: Any) -> None:
        """Inflate one member into ``out`` by range requests, within its declared size and
        the deadline (a zip bomb's declared size is not trusted: the output is inflated in
        steps of at most INFLATE_STEP bytes and stops once it passes the declared size)."""
        started = time.monotonic()
        header = self._range(url, member.offset, member.offset + 29)
        if header[:4] != LOCAL or len(header) < 30:
            raise IndexUnreachable(url, f"no local header for {member.name}")
        if member.method not in (0, 8):
            raise IndexUnreachable(url, f"{member.name}: zip method {member.method} is not read here")
        name_len, extra_len = struct.unpack("<HH", header[26:30])
        at = member.offset + 30 + name_len + extra_len
        end = at + member.compressed
        inflate = zlib.decompressobj(-15) if member.method == 8 else None
        written = 0
        while at < end:
            if time.monotonic() - started > LIBRARY_DEADLINE:
                raise IndexUnreachable(url, f"{member.name}: not read within {LIBRARY_DEADLINE:g} s")
            last = min(end, at + LIBRARY_CHUNK) - 1
            chunk = self._range(url, at, last)
            at = last + 1
            try:
                for data in _inflated(inflate, chunk) if inflate else (chunk,):
                    written += len(data)
                    if written > member.size:
                        raise IndexUnreachable(
                            url, f"{member.name}: inflates to more than the {member.size} bytes it declares"
                        )
                    out.write(data)
            except zlib.error as exc:
                raise IndexUnreachable(url, f"{member.name}: not deflate data ({exc})") from None
        if written != member.size:
            raise IndexUnreachable(url, f"{member.name}: inflated to {written} bytes, not {member.size}")

    # zip -----------------------------------------------------------------------

    def _central(self, url: str) -> Tuple[Member, ...]:
        if url in self._members:
            return self._members[url]
        tail = self._ranged(url, f"bytes=-{TAIL_BYTES}")  # a suffix range: no HEAD first
        at = tail.rfind(EOCD)
        if at < 0 or len(tail) - at < 22:
            raise IndexUnreachable(url, "not a zip file (no complete end-of-central-directory record)")
        count, cd_size, cd_offset = struct.unpack("<HII", tail[at + 10 : at + 20])
        locator = tail.rfind(ZIP64_LOCATOR, 0, at)
        if locator >= 0 and at - locator >= 16:  # zip64: wheels over 4 GiB or with more than 65535 members
            (zip64_offset,) = struct.unpack("<Q", tail[locator + 8 : locator + 16])
            record = self._range(url, zip64_offset, zip64_offset + 55)
            if record[:4] == ZIP64_EOCD and len(record) >= 56:
                count, cd_size, cd_offset = struct.unpack("<QQQ", record[32:56])
        if count > MAX_MEMBERS:
            raise IndexUnreachable(url, f"the zip declares {count} members, more than the {MAX_MEMBERS} read")
        directory = self._range(url, cd_offset, cd_offset + cd_size - 1) if cd_size else b""
        try:
            members = tuple(_parse_central(directory, count))
        except ValueError as exc:
            raise IndexUnreachable(url, f"a damaged zip central directory ({exc})") from None
        self._members[url] = members
        return members

    def _read_member(self, url: str, member: Member) -> bytes:
        """One small member, inflated to at most its declared size (itself at most
        MAX_MEMBER_BYTES): a member that inflates to more is refused, not held in memory."""
        # deflate never grows data by more than a few bytes per 16 KiB block
        if member.size > MAX_MEMBER_BYTES or member.compressed > MAX_MEMBER_BYTES + 1024:
            raise IndexUnreachable(url, f"{member.name} is {member.size} bytes: only small members are read")
        if member.method not in (0, 8):
            raise IndexUnreachable(url, f"{member.name}: zip method {member.method} is not read here")
        header = self._range(url, member.offset, member.offset + 29)
        if header[:4] != LOCAL or len(header) < 30:
            raise IndexUnreachable(url, f"no local header for {member.name}")
        name_len, extra_len = struct.unpack("<HH", header[26:30])
        start = member.offset + 30 + name_len + extra_len
        data = self._range(url, start, start + member.compressed - 1) if member.compressed else b""
        if member.method == 0:
            return data[: member.size]
        inflate = zlib.decompressobj(-15)
        out = bytearray()
        try:
            for piece in _inflated(inflate, data):
                out += piece
                if len(out) > member.size:
                    raise IndexUnreachable(
                        url, f"{member.name}: inflates to more than the {member.size} bytes it declares"
                    )
        except zlib.error as exc:
            raise IndexUnreachable(url, f"{member.name}: not deflate data ({exc})") from None
        return bytes(out)

    # http ----------------------------------------------------------------------

    def _range(self, url: str, first: int, last: int) -> bytes:
        return self._ranged(url, f"bytes={first}-{last}")

    def _ranged(self, url: str, spec: str) -> bytes:
        self.requests += 1
        fetched = read_url(url, timeout=self.timeout, limit=MAX_FILE_BYTES, headers={"Range": spec})
        if fetched is None or fetched.status != 206:
            raise IndexUnreachable(without_credentials(url), "the server ignores range requests")
        return fetched.body

    def _get(self, url: str, *, limit: int = MAX_PAGE_BYTES) -> Optional[bytes]:
        self.requests += 1
        fetched = read_url(url, timeout=self.timeout, limit=limit)
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


def _inflated(inflate: Any, data: bytes) -> Iterator[bytes]:
    """``data`` through ``inflate`` in pieces of at most INFLATE_STEP bytes: the caller
    stops at its limit, so a bomb never inflates whole in one call."""
    piece = inflate.decompress(data, INFLATE_STEP)
    while piece:
        yield piece
        if not inflate.unconsumed_tail:
            break
        piece = inflate.decompress(inflate.unconsumed_tail, INFLATE_STEP)


def _dt_needed_entries(elf: ELFFile, stream: Any) -> List[str]:
    """The DT_NEEDED sonames, from the program headers only.

    pyelftools' DynamicSegment finds its string table through the section headers, which
    some wheels' libraries hold in a form it cannot read (MXNet 1.5.1's libmxnet.so: e_shnum
    0, the count moved to section 0), and the dynamic loader never reads. So the program
    headers and dynamic entries are parsed with pyelftools' own structures, and DT_STRTAB's
    address is mapped to a file offset through the PT_LOAD segments, as the loader does.

    The counts and lengths are capped (MAX_DYNAMIC_ENTRIES, MAX_NEEDED, MAX_SONAME): more is
    no real library, and a ValueError names what was over.
    """
    headers = [
        struct_parse(elf.structs.Elf_Phdr, stream, stream_pos=elf["e_phoff"] + i * elf["e_phentsize"])
        for i in range(elf["e_phnum"])
    ]
    needed: List[int] = []
    strtab: Optional[int] = None
    for header in headers:
        if header["p_type"] != "PT_DYNAMIC":
            continue
        size = elf.structs.Elf_Dyn.sizeof()
        end = header["p_offset"] + min(header["p_filesz"], MAX_DYNAMIC_ENTRIES * size)
        for at in range(header["p_offset"], end, size):
            entry = struct_parse(elf.structs.Elf_Dyn, stream, stream_pos=at)
            if entry["d_tag"] == "DT_NULL":
                break
            if entry["d_tag"] == "DT_NEEDED":
                needed.append(entry["d_val"])
                if len(needed) > MAX_NEEDED:
                    raise ValueError(f"more than {MAX_NEEDED} DT_NEEDED entries")
            elif entry["d_tag"] == "DT_STRTAB":
                strtab = entry["d_ptr"]
    if strtab is None:
        return []
    offset = next(
        (
            strtab - h["p_vaddr"] + h["p_offset"]
            for h in headers
            if h["p_type"] == "PT_LOAD" and h["p_vaddr"] <= strtab < h["p_vaddr"] + h["p_filesz"]
        ),
        None,
    )
    if offset is None:
        raise ValueError("DT_STRTAB lies in no loaded segment")
    return [_soname(stream, offset + n) for n in needed]


def _soname(stream: Any, at: int) -> str:
    """The NUL-terminated name at ``at``, of at most MAX_SONAME bytes."""
    stream.seek(at)
    raw: bytes = stream.read(MAX_SONAME + 1)
    name, nul, _ = raw.partition(b"\0")
    if not nul:
        raise ValueError(f"a soname longer than {MAX_SONAME} bytes")
    return name.decode("utf-8", "replace")


def _parse_central(directory: bytes, count: int) -> List[Member]:
    """The ``count`` members the directory declares; ValueError when it holds fewer."""
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
    if len(members) < count:
        raise ValueError(f"{len(members)} members, not the {count} it declares")
    return members


def _zip64_sizes(extra: bytes, size: int, compressed: int, offset: int) -> Tuple[int, int, int]:
    """Fields set to 0xFFFFFFFF live in the zip64 extra block, in this order."""
    at = 0
    while at + 4 <= len(extra):
        tag, length = struct.unpack("<HH", extra[at : at + 4])
        if tag == 1:
            if at + 4 + length > len(extra):
                raise ValueError(f"a zip64 extra block of {len(extra) - at - 4} bytes claims {length}")
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
