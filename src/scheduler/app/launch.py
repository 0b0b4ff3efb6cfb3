"""The `kube-pyscheduler` executable: the command line, with the collector held off first.

Importing the command's modules (numpy, aiohttp, pydantic and the models built on it, every
installed plugin) allocates hundreds of thousands of objects that live as long as the process,
and each automatic collection along the way walks all of them again: about a tenth of the time
to the daemon's first Binding. So the process starts with collection held (`startup_gc`); the
daemon releases it once its informers have synced, and every other command before it starts
its own work. `python -m scheduler.app.cli` still works, holding only from the configuration on.
"""

from __future__ import annotations

from scheduler.app.startup_gc import START_UP


def main() -> int:
    START_UP.hold()
    try:
        from scheduler.app.cli import main as command_line  # noqa: PLC0415

        return command_line()
    finally:
        START_UP.release(freeze=False)


if __name__ == "__main__":
    raise SystemExit(main())
