"""The deeplink-gen command (`deeplink-gen`, `python -m deeplink_gen`): the CLI,
with Ctrl-C (SIGINT) and SIGTERM answered as click answers Ctrl-C ("Aborted!",
exit 1) at any moment of a run after Python has started, also while the
libraries are imported and while it exits: what the run was writing is undone
as for any error. The first signal interrupts the run; later ones are ignored,
so that none interrupts the clean-up of the first. A run that was interrupted
ends with its exit status at once: Python would otherwise end it by the signal
whenever the interrupt passed through code run by an extension, even though
it was handled."""

import os
import signal
import sys

_SIGNALS = (signal.SIGINT, signal.SIGTERM)
_interrupted = False        # set by the first of them


def _ignore() -> None:
    for sig in _SIGNALS:
        signal.signal(sig, signal.SIG_IGN)


def _interrupt(signum, frame):
    global _interrupted
    _ignore()
    _interrupted = True
    raise KeyboardInterrupt


def run() -> None:
    for sig in _SIGNALS:
        signal.signal(sig, _interrupt)
    try:
        from deeplink_gen.cli import main

        main()
    except KeyboardInterrupt:
        sys.stderr.write("Aborted!\n")
        sys.exit(1)
    finally:
        _ignore()
        if _interrupted:
            _exit_now(sys.exc_info()[1])


def _exit_now(exc: BaseException | None) -> None:
    code = exc.code if isinstance(exc, SystemExit) else 1
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(code if isinstance(code, int) else 0 if code is None else 1)


if __name__ == "__main__":
    run()
