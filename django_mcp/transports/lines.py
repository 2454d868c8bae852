"""Reading newline-delimited messages from a blocking byte stream, with a cap on a line's size."""

import asyncio
from typing import BinaryIO


class LineTooLong(Exception):
    """A line exceeded the limit; it was read to its end and dropped."""


class LineReader:
    """
    Lines from a blocking stream (a pipe, a file, a terminal), read in a thread so the event loop
    stays free. A line longer than ``limit`` bytes is consumed up to its newline and reported
    with :class:`LineTooLong`, so one oversized message costs neither memory nor the next message.
    """

    def __init__(self, stream: BinaryIO, *, limit: int, chunk_size: int = 65536) -> None:
        self.stream = stream
        self.limit = limit
        self.chunk_size = chunk_size
        self.buffer = bytearray()
        self.eof = False

    def _read_chunk(self) -> bytes:
        read1 = getattr(self.stream, "read1", None)
        return read1(self.chunk_size) if read1 is not None else self.stream.read(self.chunk_size)

    async def _fill(self) -> None:
        chunk = await asyncio.to_thread(self._read_chunk)
        if chunk:
            self.buffer.extend(chunk)
        else:
            self.eof = True

    async def readline(self) -> bytes | None:
        """The next line without its newline; None at end of input."""
        discarding = False
        while True:
            newline = self.buffer.find(b"\n")
            if newline >= 0:
                line = bytes(self.buffer[:newline])
                del self.buffer[:newline + 1]
                if discarding or len(line) > self.limit:
                    raise LineTooLong(f"Message larger than {self.limit} bytes refused")
                return line.rstrip(b"\r")
            if len(self.buffer) > self.limit:
                # Too long already: drop what we have and keep dropping until the newline.
                self.buffer.clear()
                discarding = True
            if self.eof:
                if discarding:
                    self.buffer.clear()  # the rest of the oversized line is not a message of its own
                    raise LineTooLong(f"Message larger than {self.limit} bytes refused")
                if not self.buffer:
                    return None
                line = bytes(self.buffer)
                self.buffer.clear()
                return line
            await self._fill()
