"""Tools on the server side: a registered function, its definition, and one call.

spec server/tools. The definition (``name``, ``inputSchema`` ...) is built
once at registration; :meth:`ServerTool.call` validates the arguments,
calls the function and turns what it returned (or raised) into a
``CallToolResult``. Failures the model should read — bad arguments, an
exception in the tool, output that breaks the declared schema — are
``isError`` results; only an unknown tool is a protocol error (raised by
the caller of ``call``). A server made with ``mask_tool_errors=True`` sends
the model a generic text with a reference for the failures the author did
not choose (a :class:`ToolError` keeps its text), and logs the details.
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False  # typing.TYPE_CHECKING's value, without importing typing (type checkers read it as theirs)
if TYPE_CHECKING:  # annotations only: a stdio server starts without importing typing
    from logging import Logger
    from typing import Any, Callable, Dict, List, Optional, Tuple

from ..engine.inflight import RequestContext
from ..errors import CapabilityError, ToolError
from ..errors import (
    RequestFailed as RequestFailed,  # (re-exported: raised by this module, importable where its feature lives)
)
from ..logs import get_logger, reference
from ..protocol.headers import header_params
from ..protocol.stateless import InputRequired
from ..protocol.versions import PROTOCOL_VERSION, knows, strip
from .content import error_result, result_for_version, tool_result
from .coroutines import finish, is_async
from .schema import ArgumentError, FunctionSchema
from .validation import is_simple, jsonschema_validate, validate

log: Logger = get_logger(__name__)

def checker(schema: Dict[str, Any]) -> Callable[[Any, Any, str], Optional[str]]:
    """The validator for ``schema``, chosen once: the small one when it understands every
    keyword, else jsonschema (imported only then). It is called as ``(value, schema, where)``."""
    return validate if is_simple(schema) else jsonschema_validate


class ServerTool:
    """A registered tool: the function, its definition, and how to call it.

    ``input_schema`` / ``output_schema`` override the schemas derived from
    the signature (arguments are then passed to the function unconverted).
    ``task`` is ``"optional"`` or ``"required"`` for a tool that may or must
    run as a task (:mod:`minimcp.server.tasks`), None for one that never does.
    """

    #: OAuth scopes a caller needs (``add_tool(scopes=…)``; checked before ``call``: server/auth/protection.py).
    scopes: Tuple[str, ...] = ()

    def __init__(self, fn: Callable[..., Any], name: Optional[str] = None, title: Optional[str] = None,
                 description: Optional[str] = None, annotations: Optional[Dict[str, Any]] = None,
                 icons: Optional[List[Dict[str, Any]]] = None, meta: Optional[Dict[str, Any]] = None,
                 input_schema: Optional[Dict[str, Any]] = None, output_schema: Optional[Dict[str, Any]] = None,
                 task: Optional[str] = None) -> None:
        if task not in (None, "optional", "required"):
            raise ValueError(f'task must be "optional", "required" or None, not {task!r}')
        self.fn: Callable[..., Any] = fn
        self.is_async: bool = is_async(fn)  # its coroutine runs here: server/coroutines.py
        self.task: Optional[str] = task
        self.name: str = name or fn.__name__
        self.schema: FunctionSchema = FunctionSchema(fn, context_types=(RequestContext,))
        self.input_schema: Dict[str, Any] = input_schema if input_schema is not None else self.schema.input_schema
        self.output_schema: Optional[Dict[str, Any]] = (output_schema if output_schema is not None
                                                         else self.schema.output_schema)
        self.wrap_output: bool = self.schema.wrap_output if output_schema is None else False
        definition: Dict[str, Any] = {"name": self.name}
        if title:
            definition["title"] = title
        description = description if description is not None else self.schema.description
        if description:
            definition["description"] = description
        definition["inputSchema"] = self.input_schema
        if self.output_schema is not None:
            definition["outputSchema"] = self.output_schema
        if annotations:
            definition["annotations"] = annotations
        if icons:
            definition["icons"] = icons
        if meta:
            definition["_meta"] = meta
        self.definition: Dict[str, Any] = definition
        self._custom_input = input_schema is not None
        self._check_input = checker(self.input_schema)
        self._check_output = checker(self.output_schema) if self.output_schema is not None else None
        # Arguments go to the function as they came (no conversion, no ctx): bind() and its copy skipped.
        self._as_given = not self.schema.context_param and (self._custom_input or not self.schema.converts)
        # Text goes out as one text block, which every protocol version knows as is: for a function
        # with no output schema, a str result skips tool_result() and result_for_version() (a per-call cost).
        self._text_as_is = self.output_schema is None
        #: The arguments a 2026-07-28 client mirrors in ``Mcp-Param-*`` headers: argument -> header
        #: name (``x-mcp-header`` in the input schema; none when the annotations break the rules).
        self.param_headers: Dict[str, str] = header_params(self.input_schema) or {}
        #: True when the function takes no ``ctx``: it can ask the client nothing and cannot see
        #: a cancel, so a server may run it on the thread that read the request (no hand-off).
        self.can_run_inline: bool = self.schema.context_param is None and not self.is_async  # a coroutine can see a cancel

    def definition_for(self, version: str) -> Dict[str, Any]:
        """The definition without the fields ``version`` does not know (``tool.*`` in ``versions.FEATURES``)."""
        return strip(self.definition, "tool", version)

    def call(self, arguments: Dict[str, Any], ctx: RequestContext, version: str = PROTOCOL_VERSION) -> Dict[str, Any]:
        """Validate, call the function, and build the ``CallToolResult`` for ``version``.

        Bad arguments and exceptions in the function become ``isError``
        results (spec 2025-11-25 server/tools "Error Handling"), so the
        model can read what went wrong and try again. ``structuredContent``
        is checked against ``outputSchema`` before it is sent.
        """
        if self._custom_input:
            problem = self._check_input(arguments, self.input_schema, "arguments")
        else:
            problem = self.schema.validate(arguments)
        if problem:
            return error_result(f"Invalid arguments for tool {self.name!r}: {problem}")
        if self._as_given:
            kwargs = arguments
        else:
            try:
                kwargs = arguments if self._custom_input or not self.schema.converts else self.schema.bind(arguments)
            except ArgumentError as exc:  # a string that is no date, UUID, base64 ...: bad arguments too
                return error_result(f"Invalid arguments for tool {self.name!r}: {exc}")
            if self.schema.context_param:
                kwargs = dict(kwargs)
                kwargs[self.schema.context_param] = ctx
        try:
            value = self.fn(**kwargs)
            if type(value) is str and self._text_as_is:  # (a str is no coroutine: finish() has nothing to do)
                return {"content": [{"type": "text", "text": value}], "isError": False}
            value = finish(value, ctx)
        except ToolError as exc:
            return error_result(str(exc))
        except (InputRequired, RequestFailed):
            raise  # 2026-07-28: "ask the client first" (or a protocol error the tool chose), not a failure
        except CapabilityError:
            if knows(version, "stateless"):
                raise  # -32021: the request must declare it (spec 2026-07-28 basic)
            log.warning("tool %r needs a capability the client lacks", self.name, exc_info=True)
            return error_result(f"Error in tool {self.name!r}: {sys.exc_info()[1]}")
        except Exception as exc:  # RPCError too: a refused sampling request is the tool's failure
            return self.failed(ctx, f"{type(exc).__name__}: {exc}", exc, "tool %r failed", self.name)
        try:
            result = tool_result(value, self.output_schema, self.wrap_output)
        except (TypeError, ValueError) as exc:
            return self.failed(ctx, str(exc), None, "tool %r returned a value that cannot be sent: %s",
                               self.name, exc)
        if self._check_output is not None and "structuredContent" in result:
            problem = self._check_output(result["structuredContent"], self.output_schema, "structuredContent")
            if problem:
                # spec 2025-06-18 server/tools: servers MUST provide structured
                # results that conform to the schema. The author's bug: log it.
                return self.failed(ctx, f"its result does not match its output schema ({problem})", None,
                                   "tool %r broke its output schema: %s", self.name, problem)
        return result_for_version(result, version)

    def failed(self, ctx: RequestContext, text: str, exc: Optional[BaseException], message: str,
               *args: Any) -> Dict[str, Any]:
        """The ``isError`` result of a failure the author did not choose (an exception other than
        :class:`ToolError`, a result that cannot be sent or breaks the output schema), logged
        (``message % args``, with ``exc``'s traceback when given).

        The model reads ``Error in tool 'name': <text>``, so it can recover (spec server/tools
        "Error Handling"); on a server made with ``mask_tool_errors=True`` it reads a generic
        text with a reference instead, which the log line carries too (CWE-209: ``text`` may hold
        a path, a host, a query the server must not tell).
        """
        server = getattr(getattr(ctx.session, "owner", None), "server", None)  # (a server's session)
        if not getattr(server, "mask_tool_errors", False):
            log.error(message, *args, exc_info=exc)
            return error_result(f"Error in tool {self.name!r}: {text}")
        ref = reference()
        log.error(message + " (ref %s)", *args, ref, exc_info=exc)
        return error_result(f"Error in tool {self.name!r}: internal error (ref {ref}); see the server's log")

    def __repr__(self) -> str:
        return f"<ServerTool {self.name!r} -> {getattr(self.fn, '__qualname__', self.fn)!r}>"

