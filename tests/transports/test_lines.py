"""
``LineReader`` (``django_mcp/transports/lines.py``) in-process: the framing of the stdio transport.

MCP spec 2026-07-28, basic/transports/stdio: stdio messages are newline-delimited and never contain embedded newlines. The reader
returns each line without its newline (and without a ``\\r`` before it), ``None`` at end of input,
and refuses a line longer than its limit with ``LineTooLong`` after consuming it up to its newline,
so the next line is read normally and the oversized one never sits in memory whole.
"""

from __future__ import annotations

import asyncio
import io
import os
import threading
import time
from typing import Any

import pytest

from django_mcp.transports.lines import LineReader, LineTooLong


TOO_LONG = "<too long>"
CHUNK_SIZES = [1, 3, 7, 65536]


async def read_all(reader: LineReader, *, max_reads: int = 1000) -> list[Any]:
    """Every line until ``None``; a refused line shows as ``TOO_LONG``."""
    lines: list[Any] = []
    for _ in range(max_reads):
        try:
            line = await reader.readline()
        except LineTooLong:
            lines.append(TOO_LONG)
            continue
        if line is None:
            return lines
        lines.append(line)
    raise AssertionError(f"no end of input after {max_reads} reads: {lines[:10]}")


def reader_for(data: bytes, *, limit: int = 100, chunk_size: int = 65536) -> LineReader:
    return LineReader(io.BytesIO(data), limit=limit, chunk_size=chunk_size)


@pytest.mark.parametrize("chunk_size", CHUNK_SIZES)
async def test_lines_are_split_on_newline(chunk_size: int) -> None:
    """MCP spec 2026-07-28, basic/transports/stdio: newline-delimited messages, each returned without its newline, whatever the read size."""
    reader = reader_for(b'{"a":1}\n{"b":2}\n[3]\n', chunk_size=chunk_size)
    assert await read_all(reader) == [b'{"a":1}', b'{"b":2}', b"[3]"]


@pytest.mark.parametrize("chunk_size", CHUNK_SIZES)
async def test_crlf_line_endings(chunk_size: int) -> None:
    """MCP spec 2026-07-28, basic/transports/stdio: a client on Windows may end lines with CRLF; the ``\\r`` is not part of the message."""
    reader = reader_for(b'{"a":1}\r\n{"b":2}\r\nlast\r\n', chunk_size=chunk_size)
    assert await read_all(reader) == [b'{"a":1}', b'{"b":2}', b"last"]


@pytest.mark.parametrize("chunk_size", CHUNK_SIZES)
async def test_last_line_without_newline(chunk_size: int) -> None:
    """MCP spec 2026-07-28, basic/transports/stdio: the last message is served even if the client closed stdin without a final newline."""
    reader = reader_for(b'{"a":1}\n{"b":2}', chunk_size=chunk_size)
    assert await read_all(reader) == [b'{"a":1}', b'{"b":2}']


async def test_blank_lines_are_returned_empty() -> None:
    """Blank lines come back as ``b""`` (the server skips them); they do not end the input."""
    reader = reader_for(b"\n\r\nx\n\n")
    assert await read_all(reader) == [b"", b"", b"x", b""]


async def test_empty_input() -> None:
    """MCP spec 2026-07-28, basic/transports/stdio: end of input at once is ``None`` — and stays ``None`` on later reads."""
    reader = reader_for(b"")
    assert await reader.readline() is None
    assert await reader.readline() is None


@pytest.mark.parametrize("chunk_size", CHUNK_SIZES)
async def test_oversized_line_in_the_middle_then_a_good_line(chunk_size: int) -> None:
    """
    Size cap (issue 3: "a 10 MB line is refused cleanly"): the oversized line is consumed to its
    newline and reported once; the lines around it are intact.
    """
    data = b"first\n" + b"x" * 1000 + b"\nsecond\nthird\n"
    reader = reader_for(data, limit=100, chunk_size=chunk_size)
    assert await read_all(reader) == [b"first", TOO_LONG, b"second", b"third"]


@pytest.mark.parametrize("chunk_size", CHUNK_SIZES)
async def test_two_oversized_lines_in_a_row(chunk_size: int) -> None:
    """Each oversized line is refused on its own; the reader does not merge or skip neighbours."""
    data = b"a" * 300 + b"\n" + b"b" * 250 + b"\r\nok\n"
    reader = reader_for(data, limit=100, chunk_size=chunk_size)
    assert await read_all(reader) == [TOO_LONG, TOO_LONG, b"ok"]


@pytest.mark.parametrize("chunk_size", [
    65536,  # the whole line arrives in one read: nothing is left over
    1,
    3,
    64,
])
async def test_oversized_last_line_without_newline(chunk_size: int) -> None:
    """
    An oversized line cut off by end of input is refused, then the input ends (``None``): no
    part of it may come back as a line (it would be parsed, and possibly served, as a message).
    """
    reader = reader_for(b"good\n" + b"y" * 150, limit=100, chunk_size=chunk_size)
    assert await reader.readline() == b"good"
    with pytest.raises(LineTooLong):
        await reader.readline()
    assert await reader.readline() is None


async def test_tail_of_oversized_last_line_is_not_a_message() -> None:
    """
    The same bug, shown with what it lets through: padding that overflows the limit followed by a
    complete JSON-RPC request and no newline. The whole line must be refused; the request at its
    end must never surface as a line of its own.
    """
    smuggled = b'{"jsonrpc":"2.0","id":"smuggled","method":"ping"}'
    reader = reader_for(b" " * 150 + smuggled, limit=100, chunk_size=64)
    assert await read_all(reader) == [TOO_LONG]


@pytest.mark.parametrize("chunk_size", CHUNK_SIZES)
async def test_oversized_last_line_with_newline(chunk_size: int) -> None:
    """An oversized final line that does end with a newline: refused, then end of input."""
    reader = reader_for(b"good\n" + b"y" * 500 + b"\n", limit=100, chunk_size=chunk_size)
    assert await read_all(reader) == [b"good", TOO_LONG]


@pytest.mark.parametrize("chunk_size", CHUNK_SIZES)
async def test_limit_is_inclusive(chunk_size: int) -> None:
    """A line of exactly ``limit`` bytes is accepted; one more byte is refused."""
    data = b"a" * 100 + b"\n" + b"b" * 101 + b"\n" + b"c" * 100
    reader = reader_for(data, limit=100, chunk_size=chunk_size)
    assert await read_all(reader) == [b"a" * 100, TOO_LONG, b"c" * 100]


async def test_refusal_message_names_the_limit() -> None:
    """The refusal is reported as a readable error the server forwards in its -32600 response."""
    reader = reader_for(b"z" * 50 + b"\n", limit=10)
    with pytest.raises(LineTooLong, match="10 bytes"):
        await reader.readline()


class CountingStream(io.RawIOBase):
    """A stream that produces ``total`` bytes of one huge line (then a newline and ``tail``)."""

    def __init__(self, total: int, tail: bytes) -> None:
        self.remaining = total
        self.tail = tail
        self.done = False

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        if self.remaining > 0:
            size = min(len(buffer), self.remaining)
            buffer[:size] = b"x" * size
            self.remaining -= size
            return size
        if not self.done:
            data = b"\n" + self.tail
            self.done = True
            buffer[:len(data)] = data
            return len(data)
        return 0


async def test_oversized_line_is_never_held_whole() -> None:
    """
    Issue 3: "one oversized message costs neither memory nor the next message" — while a 10 MB
    line is dropped, the buffer stays within the limit plus one chunk.
    """
    limit, chunk = 1024, 4096
    reader = LineReader(CountingStream(10 * 1024 * 1024, b"next\n"), limit=limit, chunk_size=chunk)
    peak = 0
    original_fill = reader._fill

    async def watched_fill() -> None:
        nonlocal peak
        await original_fill()
        peak = max(peak, len(reader.buffer))

    reader._fill = watched_fill  # type: ignore[method-assign]
    assert await read_all(reader, max_reads=10) == [TOO_LONG, b"next"]
    assert peak <= limit + chunk


def _feed(fd: int, pieces: list[bytes], delay: float) -> None:
    with os.fdopen(fd, "wb", buffering=0) as writer:
        for piece in pieces:
            writer.write(piece)
            time.sleep(delay)


@pytest.mark.parametrize("buffered", [True, False], ids=["buffered", "raw"])
async def test_pipe_with_messages_split_across_writes(buffered: bool) -> None:
    """
    MCP spec 2026-07-28, basic/transports/stdio on a real pipe (as stdin is): a message may arrive in several writes, several
    messages in one; an oversized line between them is dropped; closing the pipe is end of input.
    Works on a buffered reader (``read1``) and on a raw one (``read``).
    """
    read_fd, write_fd = os.pipe()
    pieces = [b'{"id":', b'1}\n{"id"', b":2}\n", b"o" * 150, b"o" * 150 + b"\n", b'{"id":3}\r', b"\n", b"tail"]
    writer = threading.Thread(target=_feed, args=(write_fd, pieces, 0.01), daemon=True)
    writer.start()
    with os.fdopen(read_fd, "rb", buffering=-1 if buffered else 0) as stream:
        reader = LineReader(stream, limit=200, chunk_size=64)
        lines = await asyncio.wait_for(read_all(reader), 10)
    writer.join(5)
    assert lines == [b'{"id":1}', b'{"id":2}', TOO_LONG, b'{"id":3}', b"tail"]


async def test_waiting_for_input_does_not_block_the_event_loop() -> None:
    """The blocking read runs in a thread: other tasks (requests in flight) keep running meanwhile."""
    read_fd, write_fd = os.pipe()
    with os.fdopen(read_fd, "rb") as stream:
        reader = LineReader(stream, limit=100)
        pending = asyncio.ensure_future(reader.readline())
        ticks = 0
        for _ in range(5):
            await asyncio.sleep(0.01)
            ticks += 1
        assert ticks == 5 and not pending.done()
        os.write(write_fd, b"hello\n")
        os.close(write_fd)
        assert await asyncio.wait_for(pending, 5) == b"hello"
        assert await asyncio.wait_for(reader.readline(), 5) is None
