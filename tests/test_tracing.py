"""OpenTelemetry tracing (minimcp.engine.tracing): a SERVER span for every request a side answers
and a CLIENT span for every one it sends, named and attributed as the semantic conventions for MCP
say, with the trace context carried in ``params._meta`` so that one trace runs through both sides,
whichever SDK each side is.

Spans are recorded by the OpenTelemetry SDK's in-memory exporter: in this process for a client or
a server here (in memory, over Streamable HTTP), and in each child process for the others (a
minimcp server over stdio, the official SDK's client and server), which write theirs as JSON at
exit (tests/interop/otel_spans.py).
"""

import json
import os
import subprocess
import threading

import pytest

import minimcp
from minimcp import Context, Server
from minimcp.errors import RPCError, Timeout

from conftest import PY, ROOT

INTEROP = os.path.join(ROOT, "tests", "interop")
TRACED_SERVER = os.path.join(INTEROP, "minimcp_traced_server.py")
BOTH_ERAS = ["2025-11-25", "2026-07-28"]


class Recorded:
    """An OpenTelemetry SDK tracer provider of a test's own, keeping every span in memory."""

    def __init__(self):
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import SimpleSpanProcessor
        from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

        self.exporter = InMemorySpanExporter()
        self.provider = TracerProvider()
        self.provider.add_span_processor(SimpleSpanProcessor(self.exporter))
        self.tracer = self.provider.get_tracer("test")

    def tracing(self):
        from minimcp.engine.tracing import tracing

        return tracing(self.provider)

    def spans(self):
        from interop.otel_spans import span_record

        return [span_record(span) for span in self.exporter.get_finished_spans()]


@pytest.fixture
def otel():
    pytest.importorskip("opentelemetry.sdk.trace", reason="needs the OpenTelemetry SDK: pip install opentelemetry-sdk")
    recorded = Recorded()
    yield recorded
    recorded.provider.shutdown()


def one(spans, name, kind):
    """The one span of that name and kind."""
    found = [span for span in spans if span["name"] == name and span["kind"] == kind]
    assert len(found) == 1, (name, kind, sorted((span["name"], span["kind"]) for span in spans))
    return found[0]


def child_of(span, parent):
    """Is ``span`` a child of ``parent``, in its trace?"""
    return span["trace_id"] == parent["trace_id"] and span["parent_id"] == parent["span_id"]


def sample(params):
    """The client's model: says what it was asked."""
    return {"role": "assistant", "model": "echo-model",
            "content": {"type": "text", "text": "you asked: " + params["messages"][0]["content"]["text"]}}


released = threading.Event()


def traced_server(otel, middleware=None):
    """The test server: traced by ``otel``, or with ``middleware`` instead."""
    server = Server("traced", middleware=[otel.tracing()] if middleware is None else middleware)

    @server.tool()
    def echo(text: str) -> str:
        """Say it back."""
        return text

    @server.tool()
    def fails() -> str:
        """A tool that fails: an isError result."""
        raise ValueError("the tool failed")

    @server.tool()
    def ask(question: str, ctx: Context) -> str:
        """Ask the client's model."""
        return ctx.sample(question, max_tokens=20)["content"]["text"]

    @server.tool()
    def waits(ctx: Context) -> str:
        """Return once the test releases it (or the call is cancelled)."""
        released.wait(10)
        return "released"

    @server.prompt()
    def greet(name: str) -> str:
        """Greet someone."""
        return f"Hello {name}"

    @server.resource("note://{name}")
    def note(name: str) -> str:
        """A note."""
        return f"note {name}"

    @server.resource("broken://note")
    def broken() -> str:
        """A resource whose function fails: a JSON-RPC error."""
        raise RuntimeError("the disk is gone")

    return server


# ---- off: nothing of it -------------------------------------------------------------------


def test_with_tracing_off_nothing_of_opentelemetry_is_loaded():
    code = """if True:
        import sys
        import minimcp
        from minimcp import Server
        server = Server("plain")

        @server.tool()
        def echo(text: str) -> str:
            return text

        with minimcp.connect("memory", server=server) as client:
            assert client.call_tool("echo", {"text": "hi"}).text == "hi"
        print(sorted(m for m in sys.modules if m.startswith(("opentelemetry", "minimcp.engine.tracing"))))
    """
    out = subprocess.run([PY, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_tracing_without_the_opentelemetry_api_says_what_to_install():
    code = """if True:
        import sys
        sys.modules["opentelemetry"] = None   # as if it were not installed
        from minimcp.engine.tracing import tracing
        try:
            tracing()
        except ImportError as exc:
            print(exc)
    """
    out = subprocess.run([PY, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert "pip install opentelemetry-api" in out.stdout and "otel" in out.stdout, out.stdout


def test_with_the_api_alone_calls_work_and_nothing_is_sent_in_meta():
    """No SDK set up: the API's tracer records nothing and has no context to send."""
    pytest.importorskip("opentelemetry.trace")
    from minimcp.engine.tracing import tracing

    seen = []
    server = Server("api-only")

    @server.tool()
    def meta(ctx: Context) -> str:
        seen.append(dict(ctx.params.get("_meta") or {}))
        return "ok"

    with minimcp.connect("memory", server=server, middleware=[tracing()]) as client:
        assert client.call_tool("meta", {}).text == "ok"
    assert len(seen) == 1 and "traceparent" not in seen[0], seen


# ---- in memory: both sides, both eras --------------------------------------------------------


@pytest.mark.parametrize("protocol", BOTH_ERAS)
def test_in_memory_each_side_has_its_span_and_one_trace_runs_through_both(otel, protocol):
    server = traced_server(otel)
    with otel.tracer.start_as_current_span("the caller") as root:
        with minimcp.connect("memory", server=server, middleware=[otel.tracing()], protocol=protocol) as client:
            assert client.call_tool("echo", {"text": "hi"}).text == "hi"
            assert client.get_prompt("greet", {"name": "Ada"})
            assert client.read_resource("note://a")
    spans = otel.spans()
    root_id = format(root.get_span_context().span_id, "016x")
    trace_id = format(root.get_span_context().trace_id, "032x")
    assert {span["trace_id"] for span in spans} == {trace_id}

    sent, answered = one(spans, "tools/call echo", "CLIENT"), one(spans, "tools/call echo", "SERVER")
    assert sent["parent_id"] == root_id
    assert child_of(answered, sent) and answered["parent_remote"] is True
    for span in (sent, answered):
        assert span["scope"] == "minimcp"
        assert span["status"] == "UNSET" and "error.type" not in span["attributes"]
        assert span["attributes"]["mcp.method.name"] == "tools/call"
        assert span["attributes"]["gen_ai.tool.name"] == "echo"
        assert span["attributes"]["gen_ai.operation.name"] == "execute_tool"
        assert span["attributes"]["mcp.protocol.version"] == protocol
        assert "network.transport" not in span["attributes"]  # (in memory: no network)
    assert answered["attributes"]["jsonrpc.request.id"].isdigit()

    prompt = one(spans, "prompts/get greet", "SERVER")
    assert prompt["attributes"]["gen_ai.prompt.name"] == "greet"
    assert "gen_ai.operation.name" not in prompt["attributes"]
    assert child_of(prompt, one(spans, "prompts/get greet", "CLIENT"))
    read = one(spans, "resources/read", "SERVER")  # (the URI is an attribute, never in the name)
    assert read["attributes"]["mcp.resource.uri"] == "note://a"
    assert child_of(read, one(spans, "resources/read", "CLIENT"))
    first = "initialize" if protocol == "2025-11-25" else "server/discover"
    assert child_of(one(spans, first, "SERVER"), one(spans, first, "CLIENT"))


def test_a_servers_request_to_its_client_is_a_client_span_there_and_a_server_span_here(otel):
    """sampling/createMessage, sent by the server mid-call: the server's CLIENT span is a child of
    its tools/call SERVER span, and the client's SERVER span a child of that, in the caller's trace."""
    server = traced_server(otel)
    with otel.tracer.start_as_current_span("the caller"):
        with minimcp.connect("memory", server=server, middleware=[otel.tracing()], protocol="2025-11-25",
                             sampling_handler=sample) as client:
            assert client.call_tool("ask", {"question": "why?"}).text == "you asked: why?"
    spans = otel.spans()
    call_sent, call_answered = one(spans, "tools/call ask", "CLIENT"), one(spans, "tools/call ask", "SERVER")
    ask_sent = one(spans, "sampling/createMessage", "CLIENT")
    ask_answered = one(spans, "sampling/createMessage", "SERVER")
    assert child_of(call_answered, call_sent)
    assert child_of(ask_sent, call_answered)
    assert child_of(ask_answered, ask_sent) and ask_answered["parent_remote"] is True
    assert ask_answered["attributes"]["mcp.method.name"] == "sampling/createMessage"
    assert ask_answered["attributes"]["jsonrpc.request.id"].isdigit()


def test_the_stateless_eras_rounds_are_each_a_request_of_the_trace(otel):
    """2026-07-28: the server asks by answering input_required, and the client calls again with the
    answer: two tools/call requests, each a CLIENT span with its SERVER span, and no sampling span."""
    server = traced_server(otel)
    with otel.tracer.start_as_current_span("the caller"):
        with minimcp.connect("memory", server=server, middleware=[otel.tracing()], protocol="2026-07-28",
                             sampling_handler=sample) as client:
            assert client.call_tool("ask", {"question": "why?"}).text == "you asked: why?"
    spans = otel.spans()
    sent = [span for span in spans if span["name"] == "tools/call ask" and span["kind"] == "CLIENT"]
    answered = [span for span in spans if span["name"] == "tools/call ask" and span["kind"] == "SERVER"]
    assert len(sent) == len(answered) == 2
    assert sorted(span["parent_id"] for span in answered) == sorted(span["span_id"] for span in sent)
    assert not [span for span in spans if span["name"] == "sampling/createMessage"]


# ---- errors --------------------------------------------------------------------------------


def test_a_json_rpc_error_fails_both_spans_with_its_code(otel):
    server = traced_server(otel)
    with minimcp.connect("memory", server=server, middleware=[otel.tracing()]) as client:
        with pytest.raises(RPCError) as refused:
            client.call_tool("no_such_tool", {})
    code = str(refused.value.code)
    spans = otel.spans()
    # (the server has no such tool: its span is named by the method alone; the client names what it called)
    for kind, name in (("CLIENT", "tools/call no_such_tool"), ("SERVER", "tools/call")):
        span = one(spans, name, kind)
        assert span["attributes"]["gen_ai.tool.name"] == "no_such_tool"
        assert span["status"] == "ERROR" and span["description"] == refused.value.message
        assert span["attributes"]["error.type"] == code == span["attributes"]["rpc.response.status_code"]
        assert span["events"] == []  # an answer the protocol has, not an exception of ours


def test_a_tool_error_is_a_tool_error_not_a_json_rpc_error(otel):
    """isError: true is an answer: no exception recorded, no JSON-RPC code; the conventions'
    error.type ``tool_error`` (and so the ERROR status) on both spans."""
    server = traced_server(otel)
    with minimcp.connect("memory", server=server, middleware=[otel.tracing()]) as client:
        result = client.call_tool("fails", {})
        assert result.is_error and "the tool failed" in result.text
        assert client.call_tool("echo", {"text": "fine"}).text == "fine"
    spans = otel.spans()
    for kind in ("CLIENT", "SERVER"):
        span = one(spans, "tools/call fails", kind)
        assert span["attributes"]["error.type"] == "tool_error"
        assert "rpc.response.status_code" not in span["attributes"]
        assert span["status"] == "ERROR" and span["events"] == []
        fine = one(spans, "tools/call echo", kind)
        assert fine["status"] == "UNSET" and "error.type" not in fine["attributes"]


def test_a_handlers_exception_is_recorded_with_the_code_the_client_got(otel):
    """The client gets -32603 with a reference (the text may say what it must not learn); the
    span has the same, and the exception itself as an event, for the server's operator."""
    server = traced_server(otel)
    with minimcp.connect("memory", server=server, middleware=[otel.tracing()]) as client:
        with pytest.raises(RPCError) as refused:
            client.read_resource("broken://note")
    spans = otel.spans()
    answered = one(spans, "resources/read", "SERVER")
    assert answered["attributes"]["error.type"] == str(refused.value.code) == "-32603"
    assert answered["attributes"]["rpc.response.status_code"] == "-32603"
    assert answered["status"] == "ERROR" and answered["description"] == refused.value.message
    assert answered["events"] == ["exception"]
    assert one(spans, "resources/read", "CLIENT")["attributes"]["error.type"] == "-32603"


def test_a_call_that_times_out_is_a_timeout_on_the_client_span(otel):
    server = traced_server(otel)
    released.clear()
    try:
        with minimcp.connect("memory", server=server, middleware=[otel.tracing()]) as client:
            with pytest.raises(Timeout):
                client.call_tool("waits", {}, timeout=0.3)
            released.set()
    finally:
        released.set()
    sent = one(otel.spans(), "tools/call waits", "CLIENT")
    assert sent["attributes"]["error.type"] == "timeout"
    assert "rpc.response.status_code" not in sent["attributes"]
    assert sent["status"] == "ERROR" and sent["events"] == ["exception"]


# ---- what _meta carries ------------------------------------------------------------------------


def test_the_trace_context_joins_what_meta_already_carries(otel):
    """A progress token (added after the middleware) and a caller's own _meta key stay beside it."""
    server = Server("meta")
    seen = []

    @server.tool()
    def meta(ctx: Context) -> str:
        ctx.report_progress(1, 1)
        seen.append(dict(ctx.params["_meta"]))
        return "ok"

    def mine(request, call_next):
        if request.outgoing and request.method == "tools/call":
            request.params["_meta"] = dict(request.params.get("_meta") or {}, **{"example.com/mine": 1})
        return call_next(request)

    progress = []
    with otel.tracer.start_as_current_span("the caller"):
        with minimcp.connect("memory", server=server, middleware=[mine, otel.tracing()]) as client:
            assert client.call_tool("meta", {}, on_progress=lambda *report: progress.append(report)).text == "ok"
    sent = one(otel.spans(), "tools/call meta", "CLIENT")
    [carried] = seen
    assert carried["example.com/mine"] == 1 and "progressToken" in carried
    version, trace_id, parent_id, flags = carried["traceparent"].split("-")  # (W3C Trace Context)
    assert (version, trace_id, parent_id) == ("00", sent["trace_id"], sent["span_id"]) and int(flags, 16) & 1


@pytest.mark.parametrize("traceparent", [12, "00-not-a-trace-context", "00-" + "0" * 32 + "-" + "0" * 16 + "-01"])
def test_a_malformed_trace_context_starts_a_trace_of_its_own(otel, traceparent):
    server = traced_server(otel)

    def forged(request, call_next):
        if request.outgoing:
            request.params["_meta"] = {"traceparent": traceparent}
        return call_next(request)

    with otel.tracer.start_as_current_span("the caller"):
        with minimcp.connect("memory", server=server, middleware=[forged]) as client:
            assert client.call_tool("echo", {"text": "hi"}).text == "hi"
    answered = one(otel.spans(), "tools/call echo", "SERVER")
    assert answered["parent_id"] is None and answered["status"] == "UNSET"


TRACEPARENT = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"


@pytest.mark.parametrize("meta", [
    {"baggage": 1}, {"baggage": 1.5}, {"baggage": True}, {"baggage": [1]}, {"baggage": {"a": 1}},
    {"traceparent": TRACEPARENT, "tracestate": [[1]]},
    {"traceparent": TRACEPARENT, "baggage": "k=" + "v" * 10000},
    {"traceparent": TRACEPARENT, "tracestate": 7, "baggage": None},
], ids=["int", "float", "bool", "list", "object", "nested-list", "huge", "mixed"])
def test_trace_context_values_of_any_type_are_read_or_ignored_never_fail_the_request(otel, meta, caplog):
    """A peer's _meta is read field by field: a value that is no string (or longer than the W3C
    limit, 8192) is not read, and the request is answered as without it (OpenTelemetry 1.45
    raises AttributeError for some of these, which was answered -32603)."""
    caplog.set_level("WARNING", logger="minimcp")
    server = traced_server(otel)

    def forged(request, call_next):
        if request.outgoing:
            request.params["_meta"] = dict(meta)
        return call_next(request)

    with minimcp.connect("memory", server=server, middleware=[forged], protocol="2025-11-25") as client:
        assert client.call_tool("echo", {"text": "hi"}).text == "hi"
        assert client.request("ping", {}) == {}
    answered = one(otel.spans(), "tools/call echo", "SERVER")
    assert answered["status"] == "UNSET"
    # a valid traceparent beside a bad field still makes the parent
    assert answered["parent_id"] == ("b7ad6b7169203331" if "traceparent" in meta else None)
    assert [record.getMessage() for record in caplog.records if record.name.startswith("minimcp")] == []


def test_a_servers_sampling_request_with_a_bad_trace_context_is_answered_by_a_traced_client(otel):
    """The client answers what a server sends it: a hostile server's _meta is read as carefully."""
    def forged(request, call_next):
        if request.outgoing and request.method == "sampling/createMessage":
            request.params["_meta"] = {"baggage": 1, "tracestate": [[1]], "traceparent": TRACEPARENT}
        return call_next(request)

    server = traced_server(otel, [forged])

    with minimcp.connect("memory", server=server, middleware=[otel.tracing()], protocol="2025-11-25",
                         sampling_handler=sample) as client:
        assert client.call_tool("ask", {"question": "why?"}).text == "you asked: why?"
    answered = one(otel.spans(), "sampling/createMessage", "SERVER")
    assert answered["parent_id"] == "b7ad6b7169203331" and answered["status"] == "UNSET"


# ---- OpenTelemetry that fails never fails a request ------------------------------------------


class _Broken(Exception):
    """What the broken OpenTelemetry parts below raise."""


def _broken_provider(where):
    """An OpenTelemetry SDK tracer provider whose span processor (``on_start``, ``on_end``) or
    sampler raises."""
    from opentelemetry.sdk.trace import SpanProcessor, TracerProvider
    from opentelemetry.sdk.trace.sampling import Sampler

    class Processor(SpanProcessor):
        def on_start(self, span, parent_context=None):
            if where == "on_start":
                raise _Broken("on_start")

        def on_end(self, span):
            if where == "on_end":
                raise _Broken("on_end")

    class Raising(Sampler):
        def should_sample(self, *args, **kwargs):
            raise _Broken("sampler")

        def get_description(self):
            return "raising"

    provider = TracerProvider(sampler=Raising()) if where == "sampler" else TracerProvider()
    provider.add_span_processor(Processor())
    return provider


def _answers_of(server_middleware, client_middleware):
    """Every kind of answer, through a server and a client with those middleware: what the client got."""
    server = traced_server(None, server_middleware)
    got = []
    with minimcp.connect("memory", server=server, middleware=client_middleware, protocol="2025-11-25",
                         sampling_handler=sample, timeout=10) as client:
        got.append(client.call_tool("echo", {"text": "hi"}).text)
        failed = client.call_tool("fails", {})
        got.append((failed.is_error, "the tool failed" in failed.text))
        got.append(client.call_tool("ask", {"question": "why?"}).text)
        got.append(client.get_prompt("greet", {"name": "Ada"}).messages[0]["content"]["text"])
        for call in (lambda: client.call_tool("no_such_tool", {}), lambda: client.read_resource("broken://note")):
            with pytest.raises(RPCError) as refused:
                call()
            got.append(refused.value.code)
    return got


EVERY_ANSWER = ["hi", (True, True), "you asked: why?", "Hello Ada", -32602, -32603]


@pytest.mark.parametrize("where, step", [("on_start", "start"), ("sampler", "start"), ("on_end", "end")])
def test_a_span_processor_or_sampler_that_raises_changes_no_answer(otel, caplog, where, step):
    """Before: a traced server answered every call -32603 after the tool had run, and a traced
    client could not connect. Now each side answers as untraced, and logs the failure once."""
    from minimcp.engine.tracing import STEPS, tracing

    caplog.set_level("WARNING", logger="minimcp")
    provider = _broken_provider(where)
    assert _answers_of([tracing(provider)], [tracing(provider)]) == EVERY_ANSWER
    logged = [record for record in caplog.records if record.name == "minimcp.engine.tracing"]
    # once for each side's middleware, whatever the number of requests (a dozen here)
    assert [record.getMessage().split(";")[0] for record in logged] == ["tracing: " + STEPS[step]] * 2
    assert all(isinstance(record.exc_info[1], _Broken) for record in logged)
    # the errors logged are the handlers' own (the failing tool and resource), as untraced
    assert sorted(record.name for record in caplog.records if record.levelname == "ERROR") == [
        "minimcp.server.methods", "minimcp.server.tools"]


def _exploding_provider():
    """An OpenTelemetry API tracer provider whose spans raise at every call but the one that makes
    them: a third-party tracer with a bug (the API lets any class be one)."""
    from opentelemetry import trace

    class Span(trace.NonRecordingSpan):
        def set_attribute(self, key, value):
            raise _Broken("set_attribute")

        def set_attributes(self, attributes):
            raise _Broken("set_attributes")

        def set_status(self, status, description=None):
            raise _Broken("set_status")

        def record_exception(self, exception, attributes=None, timestamp=None, escaped=False):
            raise _Broken("record_exception")

        def end(self, end_time=None):
            raise _Broken("end")

    class Tracer(trace.NoOpTracer):
        def start_span(self, name, context=None, kind=trace.SpanKind.INTERNAL, attributes=None, links=None,
                       start_time=None, record_exception=True, set_status_on_exception=True):
            return Span(trace.SpanContext(0x1, 0x2, is_remote=False, trace_flags=trace.TraceFlags(1)))

    class Provider(trace.NoOpTracerProvider):
        def get_tracer(self, *args, **kwargs):
            return Tracer()

    return Provider()


def test_spans_that_raise_when_recorded_or_ended_change_no_answer(caplog):
    """A failing set_status on the span of a JSON-RPC error left -32603 instead of the -32602 the
    handler answered; a failing end() replaced every answer. Now: the handler's own answers."""
    pytest.importorskip("opentelemetry.trace")
    from minimcp.engine.tracing import STEPS, tracing

    caplog.set_level("WARNING", logger="minimcp")
    provider = _exploding_provider()
    assert _answers_of([tracing(provider)], [tracing(provider)]) == EVERY_ANSWER
    steps = [record.getMessage().split(";")[0] for record in caplog.records if record.name == "minimcp.engine.tracing"]
    assert sorted(steps) == sorted(["tracing: " + STEPS["record"], "tracing: " + STEPS["end"]] * 2)


def test_a_propagator_that_raises_changes_no_answer(otel, caplog):
    """A propagator raising in inject (the client's side) and extract (the server's)."""
    from opentelemetry import propagate
    from opentelemetry.propagators.textmap import TextMapPropagator

    from minimcp.engine.tracing import STEPS

    class Raising(TextMapPropagator):
        def inject(self, carrier, context=None, setter=None):
            raise _Broken("inject")

        def extract(self, carrier, context=None, getter=None):
            raise _Broken("extract")

        @property
        def fields(self):
            return {"traceparent"}

    def forged(request, call_next):  # (inside the tracing middleware: its inject failed, so this sends one)
        if request.outgoing:
            request.params["_meta"] = dict(request.params.get("_meta") or {}, traceparent=TRACEPARENT)
        return call_next(request)

    caplog.set_level("WARNING", logger="minimcp")
    previous = propagate.get_global_textmap()
    propagate.set_global_textmap(Raising())
    try:
        assert _answers_of([otel.tracing()], [otel.tracing(), forged]) == EVERY_ANSWER
    finally:
        propagate.set_global_textmap(previous)
    steps = [record.getMessage().split(";")[0] for record in caplog.records if record.name == "minimcp.engine.tracing"]
    # both sides inject (the client's calls, the server's sampling request), once each in the log; the
    # server extracts (what `forged` sent); the client has nothing to extract (the server's inject failed)
    assert sorted(steps) == sorted(["tracing: " + STEPS["inject"]] * 2 + ["tracing: " + STEPS["extract"]])
    assert one(otel.spans(), "tools/call echo", "SERVER")["parent_id"] is None  # (its own trace)


# ---- what a peer controls: span names, attribute sizes, the parent, baggage -----------------


def test_a_servers_span_names_only_the_tools_and_prompts_it_has(otel):
    """A peer's made-up names are not span names (the conventions: a low-cardinality target, else
    the method alone), and what a span takes from the request is cut to 256 characters."""
    server = traced_server(otel)
    with minimcp.connect("memory", server=server, protocol="2025-11-25") as client:  # (untraced)
        for n in range(5):
            with pytest.raises(RPCError):
                client.request("tools/call", {"name": "x" * 100_000 + str(n), "arguments": {}})
        with pytest.raises(RPCError):
            client.request("prompts/get", {"name": "p" * 50_000, "arguments": {}})
        assert client.read_resource("note://" + "u" * 50_000)
        assert client.call_tool("echo", {"text": "hi"}).text == "hi"
        assert client.get_prompt("greet", {"name": "Ada"})
    spans = [span for span in otel.spans() if span["kind"] == "SERVER"]
    assert sorted({span["name"] for span in spans}) == [
        "initialize", "prompts/get", "prompts/get greet", "resources/read", "tools/call", "tools/call echo"]
    made_up = [span for span in spans if span["name"] == "tools/call"]
    assert len(made_up) == 5
    for span in made_up:
        assert span["attributes"]["gen_ai.tool.name"] == "x" * 256
        assert span["attributes"]["error.type"] == "-32602"
        assert len(span["description"]) <= 1024
    assert one(spans, "prompts/get", "SERVER")["attributes"]["gen_ai.prompt.name"] == "p" * 256
    assert one(spans, "resources/read", "SERVER")["attributes"]["mcp.resource.uri"] == ("note://" + "u" * 50_000)[:256]


def test_a_peers_request_id_is_cut_on_the_span(otel):
    """A JSON-RPC id may be any string: a 100 000-character one, POSTed to a sessionless app."""
    import requests

    running = _http_server(otel, sessions=False)
    try:
        answer = requests.post(running.url + "/mcp", timeout=10, json={
            "jsonrpc": "2.0", "id": "r" * 100_000, "method": "tools/call",
            "params": {"name": "echo", "arguments": {"text": "hi"}}}, headers={
            "Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-11-25"})
        assert answer.status_code == 200, answer.text[:300]
    finally:
        running.stop()
    assert one(otel.spans(), "tools/call echo", "SERVER")["attributes"]["jsonrpc.request.id"] == "r" * 256


def test_an_untrusted_peers_trace_context_is_a_link_not_the_parent(otel):
    from minimcp.engine.tracing import tracing

    server = traced_server(otel, [tracing(otel.provider, trust_remote_parent=False)])
    with otel.tracer.start_as_current_span("the caller"):
        with minimcp.connect("memory", server=server, middleware=[otel.tracing()], protocol="2025-11-25") as client:
            assert client.call_tool("echo", {"text": "hi"}).text == "hi"
    spans = otel.spans()
    sent, answered = one(spans, "tools/call echo", "CLIENT"), one(spans, "tools/call echo", "SERVER")
    assert answered["parent_id"] is None and answered["trace_id"] != sent["trace_id"]  # (no ambient span here)
    assert answered["links"] == [sent["span_id"]]


@pytest.mark.parametrize("accept_baggage", [False, True])
def test_the_baggage_a_request_carries_is_current_in_the_handler_only_when_accepted(otel, accept_baggage):
    """W3C Baggage is always sent (the propagators write it); the answering side makes it current
    only with tracing(accept_baggage=True), the peer's entries over its own."""
    from opentelemetry import baggage, context

    from minimcp.engine.tracing import tracing

    server = Server("baggage", middleware=[tracing(otel.provider, accept_baggage=accept_baggage)])
    seen = []

    @server.tool()
    def show(ctx: Context) -> str:
        """What baggage is current."""
        seen.append((ctx.params["_meta"].get("baggage"), dict(baggage.get_all())))
        return "ok"

    with minimcp.connect("memory", server=server, middleware=[otel.tracing()], protocol="2025-11-25") as client:
        with otel.tracer.start_as_current_span("the caller"):
            token = context.attach(baggage.set_baggage("tenant", "acme"))
            try:
                assert client.call_tool("show", {}).text == "ok"
            finally:
                context.detach(token)
    assert seen == [("tenant=acme", {"tenant": "acme"} if accept_baggage else {})]


def test_the_address_of_a_url_is_read_from_its_cache_once(otel, monkeypatch):
    """The cache of server.address by URL is cleared by whichever thread fills it past 256 URLs:
    a check, then a read, could find it gone in between (a KeyError that failed the request)."""
    from minimcp.engine import tracing as module

    class ClearedByAnotherThread(dict):
        """A cache that another thread clears right after this one asked whether it holds a URL."""

        def __contains__(self, url):
            held = dict.__contains__(self, url)
            self.clear()
            return held

    running = _http_server(otel)
    try:
        url = running.url + "/mcp"
        monkeypatch.setattr(module, "_ADDRESSES", ClearedByAnotherThread({url: ("127.0.0.1", 1)}))
        with minimcp.connect(url, middleware=[otel.tracing()], protocol="2025-11-25") as client:
            assert client.call_tool("echo", {"text": "hi"}).text == "hi"
    finally:
        running.stop()
    sent = one(otel.spans(), "tools/call echo", "CLIENT")
    assert (sent["attributes"]["server.address"], sent["attributes"]["server.port"]) == ("127.0.0.1", 1)


# ---- over stdio and Streamable HTTP ---------------------------------------------------------


def test_over_stdio_a_child_server_continues_the_clients_trace(otel, tmp_path):
    server_spans = tmp_path / "server.json"
    with otel.tracer.start_as_current_span("the caller"):
        with minimcp.connect([PY, TRACED_SERVER, str(server_spans)], middleware=[otel.tracing()],
                             protocol="2025-11-25", sampling_handler=sample) as client:
            assert client.call_tool("echo", {"text": "hi"}).text == "minimcp says hi"
            assert client.call_tool("ask", {"question": "why?"}).text == "you asked: why?"
    mine = otel.spans()
    theirs = json.loads(server_spans.read_text())
    trace_ids = {span["trace_id"] for span in mine + theirs}
    assert len(trace_ids) == 1
    assert child_of(one(theirs, "tools/call echo", "SERVER"), one(mine, "tools/call echo", "CLIENT"))
    call_answered = one(theirs, "tools/call ask", "SERVER")
    assert child_of(call_answered, one(mine, "tools/call ask", "CLIENT"))
    ask_sent = one(theirs, "sampling/createMessage", "CLIENT")
    assert child_of(ask_sent, call_answered)
    assert child_of(one(mine, "sampling/createMessage", "SERVER"), ask_sent)
    for span in mine + theirs:
        if span["scope"] == "minimcp":
            assert span["attributes"]["network.transport"] == "pipe", span
            assert "mcp.session.id" not in span["attributes"]  # (stdio has no session id)


def _http_server(otel, **options):
    """The traced server's app on the built-in HTTP server, wrapped as an HTTP server instrumentation
    would: each POST in a span of its own, current while the app runs."""
    from minimcp.server.http.wsgiserver import BackgroundServer

    app = traced_server(otel).wsgi_app(**options)

    def instrumented(environ, start_response):
        with otel.tracer.start_as_current_span("POST /mcp", kind=_server_kind()):
            return app(environ, start_response)

    instrumented.close = app.close  # (the server's stop() closes its app)
    return BackgroundServer(instrumented).start()


def _server_kind():
    from opentelemetry.trace import SpanKind

    return SpanKind.SERVER


@pytest.mark.parametrize("protocol", BOTH_ERAS)
def test_over_streamable_http_the_spans_say_tcp_http_and_where(otel, protocol):
    from minimcp.engine.tracing import session_digest

    running = _http_server(otel)
    try:
        with otel.tracer.start_as_current_span("the caller"):
            with minimcp.connect(running.url + "/mcp", middleware=[otel.tracing()], protocol=protocol,
                                 sampling_handler=sample) as client:
                assert client.call_tool("echo", {"text": "hi"}).text == "hi"
                session_id = client.session.transport.session_id
                if protocol == "2025-11-25":  # (the stateless era asks by input_required instead)
                    assert client.call_tool("ask", {"question": "why?"}).text == "you asked: why?"
    finally:
        running.stop()
    spans = otel.spans()
    assert len({span["trace_id"] for span in spans if span["scope"] == "minimcp"}) == 1
    sent, answered = one(spans, "tools/call echo", "CLIENT"), one(spans, "tools/call echo", "SERVER")
    assert child_of(answered, sent)
    # The POST's own span is the ambient context: linked, not the parent (the conventions).
    posts = {span["span_id"] for span in spans if span["name"] == "POST /mcp"}
    assert len(answered["links"]) == 1 and answered["links"][0] in posts
    for span in (sent, answered):
        assert span["attributes"]["network.transport"] == "tcp"
        assert span["attributes"]["network.protocol.name"] == "http"
    port = int(running.url.rsplit(":", 1)[1])
    assert sent["attributes"]["server.address"] == "127.0.0.1" and sent["attributes"]["server.port"] == port
    if protocol == "2025-11-25":
        assert sent["attributes"]["mcp.session.id"] == session_digest(session_id) != session_id
        ask_sent = one(spans, "sampling/createMessage", "CLIENT")
        assert child_of(ask_sent, one(spans, "tools/call ask", "SERVER"))
        assert child_of(one(spans, "sampling/createMessage", "SERVER"), ask_sent)
    else:
        assert session_id is None and "mcp.session.id" not in sent["attributes"]


def test_over_streamable_http_both_sides_name_the_same_session(otel):
    running = _http_server(otel)
    try:
        with minimcp.connect(running.url + "/mcp", middleware=[otel.tracing()], protocol="2025-11-25") as client:
            assert client.call_tool("echo", {"text": "hi"}).text == "hi"
    finally:
        running.stop()
    spans = otel.spans()
    sent, answered = one(spans, "tools/call echo", "CLIENT"), one(spans, "tools/call echo", "SERVER")
    assert answered["attributes"].get("mcp.session.id") == sent["attributes"]["mcp.session.id"]


def test_a_client_span_has_the_request_id_its_server_span_has(otel):
    server = traced_server(otel)
    with minimcp.connect("memory", server=server, middleware=[otel.tracing()]) as client:
        assert client.call_tool("echo", {"text": "hi"}).text == "hi"
    spans = otel.spans()
    sent, answered = one(spans, "tools/call echo", "CLIENT"), one(spans, "tools/call echo", "SERVER")
    assert sent["attributes"].get("jsonrpc.request.id") == answered["attributes"]["jsonrpc.request.id"]


# ---- with the official SDK, both ways -------------------------------------------------------


@pytest.fixture
def sdk_with_otel(official_sdk):
    import conftest

    if subprocess.run([official_sdk, "-c", "import opentelemetry.sdk.trace"], capture_output=True).returncode:
        pytest.skip(f"the official SDK's venv has no opentelemetry-sdk: {conftest.SDK_OTEL_MISSING}")
    return official_sdk


def test_interop_the_official_clients_trace_continues_in_a_minimcp_server(sdk_with_otel, tmp_path):
    client_spans, server_spans = tmp_path / "client.json", tmp_path / "server.json"
    done = subprocess.run([sdk_with_otel, os.path.join(INTEROP, "official_traced_client.py"), str(client_spans),
                           PY, TRACED_SERVER, str(server_spans)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.splitlines() == ["minimcp says traced", "missing: MCPError"]
    theirs, mine = json.loads(client_spans.read_text()), json.loads(server_spans.read_text())
    root = one(theirs, "official root", "INTERNAL")
    assert {span["trace_id"] for span in theirs + mine} == {root["trace_id"]}
    # (the server has no tool "missing": its span is named by the method alone)
    for tool, name in (("echo", "tools/call echo"), ("missing", "tools/call")):
        sent = [span for span in theirs if span["kind"] == "CLIENT" and span["name"].endswith(f"tools/call {tool}")]
        assert len(sent) == 1, [span["name"] for span in theirs]
        answered = one(mine, name, "SERVER")
        assert child_of(sent[0], root) and child_of(answered, sent[0])
        assert answered["attributes"]["jsonrpc.request.id"] == sent[0]["attributes"]["jsonrpc.request.id"]
        assert answered["attributes"]["gen_ai.tool.name"] == tool
    refused = one(mine, "tools/call", "SERVER")
    assert refused["status"] == "ERROR" and refused["attributes"]["error.type"] == "-32602"
    assert all(span["parent_id"] for span in mine)  # every request of the official client was in its trace


@pytest.mark.parametrize("protocol", BOTH_ERAS)
def test_interop_a_minimcp_clients_trace_continues_in_the_official_server(sdk_with_otel, otel, tmp_path, protocol):
    server_spans = tmp_path / "server.json"
    with otel.tracer.start_as_current_span("the caller") as root:
        with minimcp.connect([sdk_with_otel, os.path.join(INTEROP, "official_traced_server.py"), str(server_spans)],
                             middleware=[otel.tracing()], protocol=protocol) as client:
            assert client.call_tool("echo", {"text": "hi"}).text == "sdk says hi"
    mine, theirs = otel.spans(), json.loads(server_spans.read_text())
    trace_id = format(root.get_span_context().trace_id, "032x")
    sent = one(mine, "tools/call echo", "CLIENT")
    answered = one(theirs, "tools/call echo", "SERVER")
    assert sent["trace_id"] == answered["trace_id"] == trace_id
    assert child_of(answered, sent)
    assert answered["attributes"]["gen_ai.tool.name"] == sent["attributes"]["gen_ai.tool.name"] == "echo"
    first = "initialize" if protocol == "2025-11-25" else "server/discover"
    assert child_of(one(theirs, first, "SERVER"), one(mine, first, "CLIENT"))


# ---- the example ------------------------------------------------------------------------------


def test_the_tracing_example_prints_one_trace_through_client_and_server():
    pytest.importorskip("opentelemetry.sdk.trace", reason="needs the OpenTelemetry SDK: pip install opentelemetry-sdk")
    out = subprocess.run([PY, os.path.join(ROOT, "examples", "tracing.py")], capture_output=True, text=True,
                         encoding="utf-8", timeout=60)
    assert out.returncode == 0, out.stderr
    client = [line.split() for line in out.stdout.splitlines()]
    server = [line.split() for line in out.stderr.splitlines() if line.startswith("SERVER ")]
    # kind, name..., "trace", id, "span", id, "parent", id[, error.type=...]
    assert [" ".join(words[:words.index("trace")]) for words in client] == [
        "CLIENT server/discover", "CLIENT tools/call get_weather", "CLIENT tools/call get_weather",
        "CLIENT tools/call get_forecast", "INTERNAL check the weather"]
    assert [words[-1] for words in client[2:4]] == ["error.type=tool_error", "error.type=-32602"]
    assert {words[words.index("trace") + 1] for words in client + server} == {client[0][client[0].index("trace") + 1]}
    sent = [words[words.index("span") + 1] for words in client[:4]]
    assert [words[words.index("parent") + 1] for words in server] == sent
    assert [words[-1] for words in server[2:4]] == ["error.type=tool_error", "error.type=-32602"]
    # the server has get_weather, not get_forecast: a name it lacks is not in its span's name
    assert [" ".join(words[:words.index("trace")]) for words in server] == [
        "SERVER server/discover", "SERVER tools/call get_weather", "SERVER tools/call get_weather",
        "SERVER tools/call"]
