"""Let a signal end the stdio server the way a client disconnect does.

The SDK reads stdin in a worker thread that stays blocked in read(): on Ctrl-C the event loop
cancels, then waits for that thread forever, and a second Ctrl-C prints a traceback and still
hangs. Here the server reads a pipe instead, fed by a relay thread; a signal tells the relay to
close the pipe, the server sees end of input and shuts down as usual (the service closes its
database), and the relay, a daemon thread, does not hold the process open.
"""

from __future__ import annotations

import contextlib
import io
import os
import select
import signal
import sys
import threading
from types import FrameType, TracebackType

_CHUNK = 1 << 16


class InterruptibleStdin:
    """Context manager: while active, `sys.stdin` is a pipe relayed from fd 0, and SIGINT or
    SIGTERM end it. `signal_received` tells which signal ended the input, if any."""

    def __init__(self, signals: tuple[int, ...] = (signal.SIGINT, signal.SIGTERM)) -> None:
        self.signals = signals
        self.signal_received: int | None = None
        self._previous: dict[int, object] = {}

    def __enter__(self) -> InterruptibleStdin:
        self._wire = os.dup(0)
        devnull = os.open(os.devnull, os.O_RDONLY)  # what a stray reader of fd 0 now gets
        self._saved_fd0 = os.dup(0)
        os.dup2(devnull, 0)
        os.close(devnull)
        read_fd, self._write_fd = os.pipe()
        # never closed: a late signal must not write into a reused descriptor number
        self._wake_read, self._wake_write = os.pipe()
        os.set_blocking(self._wake_write, False)
        self._saved_stdin = sys.stdin
        self.pipe = open(read_fd, "rb")  # closed with sys.stdin, or by the loop that reads it
        sys.stdin = io.TextIOWrapper(self.pipe, encoding="utf-8", errors="replace")
        threading.Thread(target=self._relay, name="cortex-stdin-relay", daemon=True).start()
        for signum in self.signals:
            self._previous[signum] = signal.signal(signum, self._on_signal)
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        for signum, handler in self._previous.items():
            signal.signal(signum, handler)  # type: ignore[arg-type]
        self._wake()
        sys.stdin = self._saved_stdin
        os.dup2(self._saved_fd0, 0)
        os.close(self._saved_fd0)

    def _on_signal(self, signum: int, frame: FrameType | None) -> None:
        del frame
        if self.signal_received is not None:  # a second signal: the user wants out now
            os.write(2, b"cortex-mcp: interrupted again, exiting without waiting\n")
            os._exit(128 + signum)
        self.signal_received = signum
        self._wake()

    def _wake(self) -> None:
        with contextlib.suppress(OSError):  # already woken: the pipe is full
            os.write(self._wake_write, b"x")

    def _relay(self) -> None:
        """Copy fd 0 into the pipe until end of input or a wake-up; only this thread ever
        writes or closes the pipe's write end, so no other thread can race on that fd."""
        try:
            while True:
                ready, _, _ = select.select([self._wire, self._wake_read], [], [])
                if self._wake_read in ready:
                    return
                chunk = os.read(self._wire, _CHUNK)
                if not chunk:
                    return
                view = memoryview(chunk)
                while view:
                    view = view[os.write(self._write_fd, view) :]
        except OSError:  # the reader went away: nothing left to feed
            return
        finally:
            os.close(self._write_fd)
            os.close(self._wire)
