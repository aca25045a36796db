"""Read the pixels of a PNG (8-bit RGB or RGBA, not interlaced: what Chromium writes) with
the standard library, so screenshot tests can assert on colours without Pillow."""

from __future__ import annotations

import struct
import zlib
from collections import Counter
from pathlib import Path
from typing import List, Tuple

Pixel = Tuple[int, int, int]


def _unfilter(kind: int, line: bytearray, previous: bytes, step: int) -> None:
    for i in range(len(line)):
        left = line[i - step] if i >= step else 0
        up = previous[i]
        corner = previous[i - step] if i >= step else 0
        if kind == 1:
            line[i] = (line[i] + left) & 0xFF
        elif kind == 2:
            line[i] = (line[i] + up) & 0xFF
        elif kind == 3:
            line[i] = (line[i] + (left + up) // 2) & 0xFF
        elif kind == 4:
            p = left + up - corner
            pa, pb, pc = abs(p - left), abs(p - up), abs(p - corner)
            near = left if pa <= pb and pa <= pc else (up if pb <= pc else corner)
            line[i] = (line[i] + near) & 0xFF


def read(path: Path) -> Tuple[int, int, List[Pixel]]:
    data = path.read_bytes()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError(f"{path} is not a PNG")
    position, chunks, header = 8, [], b""
    while position < len(data):
        (length,) = struct.unpack(">I", data[position : position + 4])
        kind = data[position + 4 : position + 8]
        body = data[position + 8 : position + 8 + length]
        if kind == b"IHDR":
            header = body
        elif kind == b"IDAT":
            chunks.append(body)
        position += 12 + length
    width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", header)
    if depth != 8 or colour not in (2, 6) or interlace:
        raise ValueError(f"{path}: only 8-bit RGB/RGBA, not interlaced")
    step = 3 if colour == 2 else 4
    raw = zlib.decompress(b"".join(chunks))
    stride = width * step
    previous = bytes(stride)
    pixels: List[Pixel] = []
    for row in range(height):
        start = row * (stride + 1)
        line = bytearray(raw[start + 1 : start + 1 + stride])
        _unfilter(raw[start], line, previous, step)
        pixels.extend((line[i], line[i + 1], line[i + 2]) for i in range(0, stride, step))
        previous = bytes(line)
    return width, height, pixels


def colours(path: Path) -> Counter:  # type: ignore[type-arg]
    return Counter(read(path)[2])
