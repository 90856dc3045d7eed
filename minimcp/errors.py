"""The exceptions minimcp raises.

Everything derives from :class:`MCPError` and, where one fits, from the
matching builtin too, so callers may write ``except TimeoutError`` or
``except minimcp.Timeout`` and both work (the pattern of requests'
``exceptions.py``).

Blame is part of the type: :class:`RPCError` is what the *peer* answered,
:class:`ConnectionClosed` is the link going away, :class:`ToolError` is raised
*by tool authors* to report a failure as a tool result.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING's value, without importing typing (type checkers read it as theirs)
if TYPE_CHECKING:  # annotations only: a stdio server starts without importing typing
    from typing import Any, Dict, Optional


class MCPError(Exception):
    """Base class of every exception minimcp raises."""


class RPCError(MCPError):
    """The peer answered a request with a JSON-RPC error.

    Raise it from a resource, prompt or completion function to send that
    error back as the answer (``code``, ``message`` and ``data`` as given)::

        from minimcp.protocol.jsonrpc import INVALID_PARAMS

        raise RPCError(INVALID_PARAMS, "no such repository: 'nope'")

    Inside a *tool* it does not: every exception a tool raises, this one
    included, becomes an ``isError: true`` tool result the model can read
    (spec server/tools "Error Handling": tool failures are results, not
    protocol errors). Raise :class:`ToolError` there to choose the text.
    """

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(code, message, data)
        self.code = code
        self.message = message
        self.data = data

    def __str__(self) -> str:
        text = f"[{self.code}] {self.message}"
        if self.data is not None:
            text += f" (data: {self.data!r})"
        return text

    def to_error(self) -> Dict[str, Any]:
        """Return the JSON-RPC ``error`` object for this exception."""
        error: Dict[str, Any] = {"code": self.code, "message": self.message}
        if self.data is not None:
            error["data"] = self.data
        return error


class RequestFailed(RPCError):
    """Raise in a tool to answer the call with this JSON-RPC error, not an ``isError`` result
    (a protocol-level failure; in a task, the task ends ``failed`` with it)."""


class Timeout(MCPError, TimeoutError):
    """A request got no answer in time (the peer was sent ``notifications/cancelled``)."""


class ConnectionClosed(MCPError, ConnectionError):
    """The connection ended before the answer came, or was already closed.

    ``exit_code`` and ``stderr_tail`` are set when the peer was a child
    process, so a crash can be read straight from the exception.
    """

    def __init__(self, message: str = "the connection is closed",
                 exit_code: Optional[int] = None, stderr_tail: str = "") -> None:
        super().__init__(message)
        self.exit_code = exit_code
        self.stderr_tail = stderr_tail


class ProtocolError(MCPError):
    """The peer broke the protocol (for example, negotiated an unsupported version)."""


class SkillVerificationError(MCPError):
    """What the server served does not match the skill's entry: do not use it (refresh the
    entry with :func:`get_skill` and load again)."""


class TaskCancelled(MCPError):
    """The task ended ``cancelled``: there is no result."""


class CapabilityError(MCPError):
    """The peer did not declare the capability a call needs (say, ``sampling``).

    Raised before anything is sent, so a tool can catch it and fall back.
    ``capability`` names it.
    """

    def __init__(self, message: str, capability: str = "") -> None:
        super().__init__(message)
        self.capability = capability


class Unauthorized(MCPError):
    """Raise from an HTTP ``auth`` hook to answer 401 with this ``WWW-Authenticate`` challenge."""

    def __init__(self, message: str = "authentication required", www_authenticate: str = "Bearer") -> None:
        super().__init__(message)
        self.www_authenticate = www_authenticate


class InvalidToken(MCPError):
    """Raised by a verifier: this token is not good here (expired, forged, for another audience…).

    The client gets 401 ``error="invalid_token"`` with this message as ``error_description``.
    """


class VerifierUnavailable(MCPError):
    """Raised by a verifier that cannot decide now (the JWKS or introspection endpoint is down).

    The client gets 503 with ``Retry-After``: its token may be fine, so it must not be thrown away.
    """


class BackendUnavailable(RPCError):
    """A server's shared backend (Redis …) could not be reached within its bounds.

    A request that needs it is answered with this -32603 error, whose message names the
    engine and its address (never its password), so that "try again" is the right reading
    and never "unknown task".
    """

    def __init__(self, message: str) -> None:
        super().__init__(-32603, f"Internal error: {message}")


class ServerNotFound(MCPError, LookupError):
    """No host config file names the server asked for; the message lists the files tried."""


class ConfigError(MCPError, ValueError):
    """A config file cannot be used: missing, not JSON, a bad entry, or a variable with no value."""


class ServerStartError(MCPError):
    """One of a hub's servers could not be started; the others were closed.

    ``server`` is its name; the original exception is ``__cause__``.
    """

    def __init__(self, server: str, cause: BaseException) -> None:
        super().__init__(f"MCP server {server!r} failed to start: {type(cause).__name__}: {cause}")
        self.server = server


class ToolError(MCPError):
    """Raise inside a tool to report a failure the model should see.

    The message becomes an ``isError: true`` tool result; the server lives on::

        @server.tool()
        def divide(a: float, b: float) -> float:
            if b == 0:
                raise ToolError("cannot divide by zero")
            return a / b
    """


class AuthError(MCPError):
    """OAuth authorization of an HTTP connection failed; the message says what to fix.

    ``error`` is the OAuth error code when a server sent one (``invalid_grant``,
    ``invalid_scope``, ``access_denied`` ...), else ``""``.
    """

    def __init__(self, message: str, error: str = "") -> None:
        super().__init__(message)
        self.error = error
