"""The signed ``requestState`` of 2026-07-28 multi round-trip requests: :class:`StateSigner`.

A server that asks its client (``ctx.elicit()``, ``ctx.sample()``, ``ctx.list_roots()``) over
2026-07-28 answers ``input_required`` and re-runs the handler when the client retries; the answers
of earlier rounds ride in ``requestState``, which this signs (HMAC-SHA256 with the server's
secret), dates and binds to the request (see :mod:`minimcp.server.stateless`). Every
:class:`~minimcp.server.Server` makes one, so it lives apart from the rest of the stateless
code, which a server loads only once a 2026-07-28 request comes.
"""

from __future__ import annotations

import json
import os
import time

TYPE_CHECKING = False  # typing.TYPE_CHECKING's value, without importing typing (type checkers read it as theirs)
if TYPE_CHECKING:  # annotations only: a stdio server starts without importing typing
    from typing import Any, Dict, List, Optional

from ..errors import RPCError
from ..protocol.jsonrpc import INVALID_PARAMS

#: The extra params of a retry, left out when binding the state to the request.
_RETRY_KEYS = ("_meta", "inputResponses", "requestState")


def _b64() -> Any:
    import base64  # late: a stdio server that never signs state or reads headers skips it

    return base64


class StateSigner:
    """Makes and checks ``requestState``: answers so far, signed, expiring, bound to one request.

    Args:
        secret: the HMAC key; give every worker of a deployment the same one
            (a random key per process works for a single process).
        ttl: seconds a state stays valid.
    """

    def __init__(self, secret: Optional[bytes] = None, ttl: float = 600.0) -> None:
        self.secret: bytes = secret or os.urandom(32)
        self.ttl: float = ttl

    @staticmethod
    def _digest(method: str, params: Dict[str, Any]) -> str:
        import hashlib  # late, like hmac below: only servers that ask the client pay for them

        own = {k: v for k, v in params.items() if k not in _RETRY_KEYS}
        text = json.dumps([method, own], sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        return hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]

    def sign(self, method: str, params: Dict[str, Any], answers: Dict[str, Any], asked: List[Any]) -> str:
        """A state carrying ``answers`` and the keys now ``asked`` for."""
        import hashlib
        import hmac

        payload = json.dumps({"m": method, "d": self._digest(method, params), "x": int(time.time() + self.ttl),
                              "a": answers, "q": asked}, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
        mac = hmac.new(self.secret, payload, hashlib.sha256).digest()
        state: str = _b64().urlsafe_b64encode(mac + payload).decode("ascii")  # (_b64(): a module, Any)
        return state

    def answers(self, method: str, params: Dict[str, Any]) -> Dict[str, Any]:
        """The answers a retry brings: the state's earlier ones plus this round's ``inputResponses``.

        Raises:
            RPCError: ``-32602`` for a state that was tampered with, has
                expired, or belongs to another request.
        """
        state = params.get("requestState")
        responses = params.get("inputResponses")
        responses = {} if responses is None else responses
        if type(responses) is not dict:
            raise RPCError(INVALID_PARAMS, "Invalid params: inputResponses must be an object")
        if state is None:
            return dict(responses)
        if not isinstance(state, str):
            raise RPCError(INVALID_PARAMS, f"Invalid params: requestState must be a string, not {state!r}")
        import hashlib
        import hmac

        try:  # validate=True: plain b64decode ignores junk after the padding (a tamper that passes)
            raw = _b64().b64decode(state.encode("ascii"), altchars=b"-_", validate=True)
            mac, payload = raw[:32], raw[32:]
            good = hmac.compare_digest(mac, hmac.new(self.secret, payload, hashlib.sha256).digest())
            data = json.loads(payload) if good else None
        except (ValueError, UnicodeError):
            data = None
        if type(data) is not dict:
            raise RPCError(INVALID_PARAMS, "Invalid params: requestState was altered or is not ours; "
                                           "start the request again without it")
        if data.get("x", 0) < time.time():
            raise RPCError(INVALID_PARAMS, "Invalid params: requestState has expired; start the request again")
        if data.get("m") != method or data.get("d") != self._digest(method, params):
            raise RPCError(INVALID_PARAMS, "Invalid params: requestState belongs to another request")
        answers = dict(data.get("a") or {})
        for key in data.get("q") or ():  # extra keys in inputResponses are ignored (spec MRTR)
            if key in responses:
                answers[key] = responses[key]
        return answers
