"""Is a file a complete shared library this process can map? Checked before ``dlopen`` sees it.

``dlopen`` trusts the file: a FIFO blocks it for ever (it opens the file and reads), and a truncated copy of a
library is mapped as its program headers say, so touching a page past the end of the file kills the process with
SIGBUS. :func:`check_shared_library` refuses both, and everything else that is not a regular ELF shared object of
this process's class and byte order whose headers and loadable segments lie inside the file, with a
:class:`~simdbind.errors.LibraryError` that names the path and the rule.
"""

from __future__ import annotations

import os
import stat
import struct
import sys

from simdbind.errors import LibraryError

__all__ = ["check_shared_library"]

_ELF_MAGIC = b"\x7fELF"
_ET_DYN = 3
_PT_LOAD = 1
#: (e_ident class byte, header struct, program header struct, offsets of p_type/p_offset/p_filesz in it)
_LAYOUTS = {
    1: ("HHIIIIIHHHHHH", "IIIIIIII", (0, 1, 4)),  # ELFCLASS32
    2: ("HHIQQQIHHHHHH", "IIQQQQQQ", (0, 2, 5)),  # ELFCLASS64
}
_NATIVE_CLASS = 2 if sys.maxsize > 2**32 else 1
_NATIVE_DATA = 1 if sys.byteorder == "little" else 2  # ELFDATA2LSB / ELFDATA2MSB


def _kind(mode: int) -> str:
    for test, name in ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"),
                       (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device")):
        if test(mode):
            return name
    return "not a regular file"


def check_shared_library(path: str) -> None:
    """Raise :class:`LibraryError` unless `path` is a regular file holding a complete ELF shared object that this
    process could map (on platforms without ELF libraries, only the regular-file rule applies)."""
    try:
        info = os.stat(path)
    except OSError as error:
        raise LibraryError(f"path: cannot read {path}: {error.strerror}") from None
    if not stat.S_ISREG(info.st_mode):
        raise LibraryError(f"path: {path} is {_kind(info.st_mode)}: a library must be a regular file")
    if not sys.platform.startswith("linux"):
        return
    try:
        # O_NONBLOCK: should the path have become a FIFO since the stat, the open must not wait for a writer.
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError as error:
        raise LibraryError(f"path: cannot read {path}: {error.strerror}") from None
    try:
        opened = os.fstat(fd)
        if not stat.S_ISREG(opened.st_mode):
            raise LibraryError(f"path: {path} is {_kind(opened.st_mode)}: a library must be a regular file")
        _check_elf(path, fd, opened.st_size)
    finally:
        os.close(fd)


def _check_elf(path: str, fd: int, size: int) -> None:
    def refuse(rule: str) -> LibraryError:
        return LibraryError(f"path: {path} is not a complete shared library: {rule}")

    ident = os.pread(fd, 16, 0)
    if len(ident) < 16:
        raise refuse(f"{size} bytes, shorter than an ELF identification (16 bytes)")
    if ident[:4] != _ELF_MAGIC:
        raise refuse("it does not start with the ELF magic number")
    elf_class, data = ident[4], ident[5]
    if elf_class != _NATIVE_CLASS or data != _NATIVE_DATA:
        raise refuse(f"ELF class {elf_class} and byte order {data}, this process needs {_NATIVE_CLASS} and "
                     f"{_NATIVE_DATA}")
    order = "<" if data == 1 else ">"
    header_format, segment_format, (p_type, p_offset, p_filesz) = _LAYOUTS[elf_class]
    header_size = 16 + struct.calcsize(order + header_format)
    header = os.pread(fd, header_size - 16, 16)
    if len(header) < header_size - 16:
        raise refuse(f"{size} bytes, shorter than its ELF header ({header_size} bytes)")
    (e_type, _machine, _version, _entry, phoff, shoff, _flags, _ehsize, phentsize, phnum, shentsize, shnum,
     _shstrndx) = struct.unpack(order + header_format, header)
    if e_type != _ET_DYN:
        raise refuse(f"ELF type {e_type}, not a shared object ({_ET_DYN})")
    segment_size = struct.calcsize(order + segment_format)
    if phnum == 0 or phentsize < segment_size:
        raise refuse(f"{phnum} program headers of {phentsize} bytes: nothing a loader can map")
    for what, offset, count, entry in (("program headers", phoff, phnum, phentsize),
                                       ("section headers", shoff, shnum, shentsize)):
        if offset + count * entry > size:
            raise refuse(f"its {what} end at byte {offset + count * entry}, past its end ({size} bytes): "
                         "the file is truncated")
    table = os.pread(fd, phnum * phentsize, phoff)
    for i in range(phnum):
        fields = struct.unpack_from(order + segment_format, table, i * phentsize)
        if fields[p_type] == _PT_LOAD and fields[p_offset] + fields[p_filesz] > size:
            raise refuse(f"its loadable segment {i} ends at byte {fields[p_offset] + fields[p_filesz]}, past its "
                         f"end ({size} bytes): the file is truncated")
