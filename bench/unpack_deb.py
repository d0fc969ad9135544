#!/usr/bin/env python3
"""Unpack Debian packages into a directory without dpkg (a GPU machine may not be Debian).

A .deb is an ar archive of debian-binary, control.tar.* and data.tar.*; the files a package
installs are data.tar.* (xz, gzip, bzip2 or uncompressed; zstd is not in Python's library).
Usage: unpack_deb.py DEST PACKAGE.deb...
"""
import io
import os
import sys
import tarfile


def members(path):
    """Yields (name, bytes) for each member of the ar archive at `path`."""
    with open(path, "rb") as f:
        if f.read(8) != b"!<arch>\n":
            raise SystemExit(f"unpack_deb: {path} is not a .deb (no ar header)")
        while True:
            header = f.read(60)
            if len(header) < 60:
                return
            name = header[:16].decode().strip().rstrip("/")
            size = int(header[48:58].decode().strip())
            data = f.read(size)
            if size % 2:
                f.read(1)  # members are aligned to even offsets
            yield name, data


def unpack(deb, dest):
    for name, data in members(deb):
        if name.startswith("data.tar"):
            if name.endswith(".zst"):
                raise SystemExit(f"unpack_deb: {deb}: zstd-compressed data ({name}); use dpkg-deb -x")
            with tarfile.open(fileobj=io.BytesIO(data), mode="r:*") as tar:
                # Absolute links inside the package point into the package's own tree.
                tar.extractall(dest, filter="tar") if hasattr(tarfile, "data_filter") else tar.extractall(dest)
            return
    raise SystemExit(f"unpack_deb: {deb} has no data.tar member")


if __name__ == "__main__":
    if len(sys.argv) < 3:
        raise SystemExit(__doc__)
    os.makedirs(sys.argv[1], exist_ok=True)
    for deb in sys.argv[2:]:
        unpack(deb, sys.argv[1])
