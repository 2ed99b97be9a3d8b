"""Where logs go (stderr, or the `logFile` setting / `--log-file`) and how each line is
bounded and redacted. Never stdout: that carries protocol frames only."""

from __future__ import annotations

import logging
import sys


class BoundedRecords(logging.Filter):
    """Every log line redacted and cut to `MAX_LOG_CHARS`: a hostile request's params (or a
    library logging a message body) can neither fill the disk nor leak a secret to the log."""

    MAX_LOG_CHARS = 2000

    def filter(self, record: logging.LogRecord) -> bool:
        from lore_sidecar.engine.capture.redact import redact

        try:
            text = record.getMessage()
        except Exception:  # a bad format string is still one bounded line
            text = str(record.msg)
        if len(text) > self.MAX_LOG_CHARS:
            text = text[: self.MAX_LOG_CHARS] + f"… [{len(text) - self.MAX_LOG_CHARS} more characters]"
        record.msg, record.args = redact(text), None
        if record.exc_info and record.exc_info[1] is not None:
            # Keep the traceback, but bounded like the message.
            record.exc_text = redact(logging.Formatter().formatException(record.exc_info)[-self.MAX_LOG_CHARS:])
            record.exc_info = None
        return True


# JSON-RPC error codes that are answers, not failures of the server: bad params, unknown
# methods, expected domain failures. pygls logs each with a traceback at ERROR.
ANSWERED_CODES = frozenset({-32600, -32601, -32602, -32803})


class AnsweredErrors(logging.Filter):
    """An error reply the client received is not a server failure: no traceback in the
    editor's LSP log, one DEBUG line at most."""

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        if getattr(exc, "code", None) in ANSWERED_CODES:
            logging.getLogger("lore_sidecar.rpc").debug("answered error %s: %s", exc.code, exc)
            return False
        if record.levelno == logging.WARNING and "unknown method" in record.getMessage():
            return False  # answered -32601
        return True


def setup_logging(level: int | str, log_file: str | None) -> None:
    handler: logging.Handler = logging.FileHandler(log_file) if log_file else logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    handler.addFilter(BoundedRecords())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
    # pygls logs whole message bodies at INFO: never let it follow -v.
    logging.getLogger("pygls").setLevel(logging.WARNING)
    rpc = logging.getLogger("pygls.protocol.json_rpc")
    if not any(isinstance(f, AnsweredErrors) for f in rpc.filters):
        rpc.addFilter(AnsweredErrors())


def apply_settings(settings, *, cli_chose: bool) -> None:
    """The user's `logLevel` / `logFile` settings, unless the command line already chose."""
    if cli_chose or (settings.log_level == "WARNING" and settings.log_file is None):
        return
    try:
        setup_logging(settings.log_level, settings.log_file)
    except OSError as exc:
        logging.getLogger(__name__).warning("logFile %s cannot be written (%s); logging to stderr", settings.log_file, exc)
