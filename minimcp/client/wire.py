"""What a server sends the client, checked where the client reads it.

A server is a peer, not a friend: its answers and notifications may have any
shape. An answer of the wrong shape raises :class:`~minimcp.ProtocolError`
saying which field was wrong (never an ``AttributeError`` from deep inside);
a notification of the wrong shape is ignored, logged at debug level, so no
callback ever sees a field of a type the spec does not allow and nothing a
server sends can stop the client.
"""

from typing import TYPE_CHECKING, Any, Callable, Dict, List, Optional, Tuple, Union

from ..errors import ProtocolError
from ..logs import get_logger
from ..protocol.levels import PYTHON_LEVELS

if TYPE_CHECKING:
    from logging import Logger

log: "Logger" = get_logger(__name__)

Kind = Union[type, Tuple[type, ...]]
_NAMES = {str: "a string", dict: "an object", list: "an array", bool: "true or false", int: "an integer",
          float: "a number"}


def _is(value: Any, kind: Kind) -> bool:
    kinds = kind if isinstance(kind, tuple) else (kind,)
    if type(value) is bool:  # JSON true is no number
        return bool in kinds
    return isinstance(value, kinds)


def _name(kind: Kind) -> str:
    kinds = kind if isinstance(kind, tuple) else (kind,)
    return " or ".join(_NAMES.get(k, k.__name__) for k in kinds)


def obj(value: Any, what: str) -> Dict[str, Any]:
    """``value`` if it is a JSON object; else a ProtocolError about ``what``."""
    if type(value) is not dict:
        raise ProtocolError(f"{what} is not an object: {value!r:.120}")
    return value


def field(raw: Dict[str, Any], key: str, kind: Kind, what: str, default: Any = None) -> Any:
    """``raw[key]`` if it has the type the spec gives it, ``default`` if it is absent or null.

    Raises:
        ProtocolError: naming ``what`` and the field, for a value of another type.
    """
    value = raw.get(key)
    if value is None:
        return default
    if type(value) is kind:  # (the usual answer, without _is()'s frame: a result checks a few per call)
        return value
    if not _is(value, kind):
        raise ProtocolError(f"{what}: {key!r} must be {_name(kind)}, not {value!r:.120}")
    return value


def objects(raw: Dict[str, Any], key: str, what: str) -> List[Any]:
    """``raw[key]``: an array of objects (``[]`` if absent), or a ProtocolError naming the bad item."""
    value = raw.get(key)
    # (the usual answer holds a list: then no field() frame for it)
    items: List[Any] = value if type(value) is list else field(raw, key, list, what, [])
    for index, item in enumerate(items):
        if type(item) is not dict:
            raise ProtocolError(f"{what}: {key}[{index}] must be an object, not {item!r:.120}")
    return items


def result(method: str, value: Any) -> Dict[str, Any]:
    """A server's result for ``method``: it must be an object."""
    return obj(value, f"the server's answer to {method}")


# -- notifications -------------------------------------------------------------------------

_NUMBER = (int, float)
_OPTIONAL_STRING = (str, type(None))
#: notification -> {field: (the types the spec allows, required)}
_SHAPES: Dict[str, Dict[str, Tuple[Any, bool]]] = {
    "notifications/message": {"level": (str, True), "logger": (_OPTIONAL_STRING, False)},
    "notifications/progress": {"progressToken": ((str, int), True), "progress": (_NUMBER, True),
                               "total": (_NUMBER + (type(None),), False), "message": (_OPTIONAL_STRING, False)},
    "notifications/resources/updated": {"uri": (str, True)},
    "notifications/subscriptions/acknowledged": {"notifications": ((dict, type(None)), False)},
    "notifications/elicitation/complete": {"elicitationId": (str, True)},
    # a whole task: 2025-11-25 tasks, and the 2026-07-28 extension's (on a listen request)
    "notifications/tasks/status": {"taskId": (str, True), "status": (str, True),
                                   "statusMessage": (_OPTIONAL_STRING, False)},
    "notifications/tasks": {"taskId": (str, True), "status": (str, True), "statusMessage": (_OPTIONAL_STRING, False)},
}


def problem(method: str, params: Dict[str, Any]) -> Optional[str]:
    """What is wrong with a notification from the server, or None if its fields have their types."""
    meta = params.get("_meta")
    if meta is not None and type(meta) is not dict:
        return f"_meta is not an object: {meta!r:.80}"
    for key, (kind, required) in _SHAPES.get(method, {}).items():
        if key not in params:
            if required:
                return f"{key!r} is missing"
        elif not _is(params[key], kind):
            return f"{key!r} must be {_name(kind)}, not {params[key]!r:.80}"
    if method == "notifications/message" and params["level"] not in PYTHON_LEVELS:
        return f"unknown log level {params['level']!r:.40}"
    return None


def route(client: Any, method: str, params: Dict[str, Any]) -> None:
    """Hand one notification from the server to the client's callbacks (on the dispatcher thread,
    in order); one of the wrong shape goes nowhere."""
    wrong = problem(method, params)
    if wrong is not None:
        log.debug("ignored %s from the server: %s", method, wrong)
        return
    if not client.stateless.notified(method, params):
        return  # from a listen request we closed
    if method == "notifications/message":
        client.on_log(params)  # (a Client's default sends it to `logging`: Client._logs_to_logging)
    elif method == "notifications/progress":
        # a call made as a task (2025-11-25): its token outlives the tools/call request, so the
        # session no longer knows it; the call's own callback is found here (client/tasks.py)
        watch = client._task_progress.get(params["progressToken"]) if client._task_progress else None
        if watch is not None:
            watch.progress(params["progress"], params.get("total"), params.get("message"))
        if client.on_progress is not None:
            client.on_progress(params)
    elif method in ("notifications/tasks/status", "notifications/tasks"):
        task = client._tasks_followed.get(params["taskId"]) if client._tasks_followed else None
        if task is not None:
            task._notified(params)
    elif method == "notifications/resources/updated" and client.on_resource_updated is not None:
        client.on_resource_updated(params["uri"])
    elif method == "notifications/tools/list_changed":
        client._tools = None  # fetched again when next asked for
        if client.on_tools_changed is not None:
            client.on_tools_changed()
    elif method == "notifications/resources/list_changed" and client.on_resources_changed is not None:
        client.on_resources_changed()
    elif method == "notifications/prompts/list_changed" and client.on_prompts_changed is not None:
        client.on_prompts_changed()
    if client.on_notification is not None:
        client.on_notification(method, params)


def checked_progress(callback: Optional[Callable[..., Any]]) -> Optional[Callable[..., Any]]:
    """``callback(progress, total, message)``, called only with the types the spec gives them."""
    if callback is None:
        return None

    def on_progress(progress: Any, total: Any, message: Any) -> None:
        if not _is(progress, _NUMBER) or not (total is None or _is(total, _NUMBER)) or not (
                message is None or isinstance(message, str)):
            log.debug("ignored a malformed progress notification: %r %r %r", progress, total, message)
            return
        callback(progress, total, message)

    return on_progress
