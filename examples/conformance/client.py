"""The MCP conformance suite's client under test, written with minimcp's public API.

    python examples/conformance/client.py URL

The official conformance suite (``@modelcontextprotocol/conformance``)
starts a mock MCP server for each client scenario and runs this script
against it, with the scenario's name in ``MCP_CONFORMANCE_SCENARIO``, its
data (if any) as JSON in ``MCP_CONFORMANCE_CONTEXT``, and, in the 0.2
suites, the protocol version to speak in ``MCP_CONFORMANCE_PROTOCOL_VERSION``
(2025-11-25 and older: the ``initialize`` handshake; 2026-07-28: stateless,
every request carries ``_meta``). The mock server records what the client
did and the suite checks it. Run it as ``.ci/run`` does (``bash .ci/conformance/setup.sh``
installs the suites into ``$CF_HOME``, by default ``~/.cache/mcp-conformance``)::

    conformance=~/.cache/mcp-conformance/suite-0.2.0-alpha.12/node_modules/.bin/conformance
    $conformance client --command "python examples/conformance/client.py" --scenario tools_call \
        --spec-version 2026-07-28

Each scenario is one function in ``SCENARIOS`` below. The script exits 0
when its scenario ran, non-zero for an unknown scenario or when a call
failed (some ``auth/*`` scenarios expect that: a client must refuse a
server that sends it to the wrong issuer, say). Every ``auth/*`` scenario
goes through ``authorized()``, with the ``minimcp.client.auth`` flow it needs. It logs
to stderr; the suite keeps stdout and stderr in its results folder.

It also reads as a tour of the client API:

- ``minimcp.connect(url, protocol=...)``, the ``with`` block that closes it;
- ``list_tools()`` / ``call_tool()`` / ``list_resources()`` / ``read_resource()``
  / ``list_prompts()`` / ``get_prompt()``, and ``request()`` for anything else;
- ``elicitation_handler=`` (schema defaults fill what the answer leaves
  out), ``sampling_handler=`` and ``roots=``: what the client answers when
  the server asks, whether as a request (handshake era) or as an
  ``input_required`` round (2026-07-28, retried by minimcp itself).
"""

import json
import logging
import os
import sys
from typing import Any, Callable, Dict

import minimcp
from minimcp.client.skills import SkillVerificationError, list_skills, load_skill

log = logging.getLogger("conformance-client")

CLIENT_INFO = {"name": "minimcp-conformance-client", "version": minimcp.__version__}
#: What to speak: a version, or "auto" (suite 0.1.16 does not say): 2026-07-28 if the server does.
PROTOCOL = os.environ.get("MCP_CONFORMANCE_PROTOCOL_VERSION") or "auto"


def connect(url: str, **options: Any) -> minimcp.Client:
    """Connect at the suite's protocol version; ``options`` are ``auth=``, ``sampling_handler=`` and friends."""
    return minimcp.connect(url, protocol=PROTOCOL, client_info=CLIENT_INFO, timeout=30, **options)


def answer_sampling(params: dict) -> dict:
    """A sampling handler standing in for an LLM."""
    return {"role": "assistant", "content": {"type": "text", "text": "Hello from the conformance client"},
            "model": "conformance-model", "stopReason": "endTurn"}


def accept_form(params: dict) -> dict:
    """An elicitation handler that accepts every form as it is: minimcp fills in each field's default."""
    log.info("elicitation: %s", params.get("message"))
    return {"action": "accept", "content": {}}


# ---------------------------------------------------------------------------
# Scenarios (one function each; the suite's name is the key in SCENARIOS)
# ---------------------------------------------------------------------------

def initialize(url: str, context: dict) -> None:
    """Handshake (initialize, then notifications/initialized), list the tools, close."""
    with connect(url) as client:
        log.info("connected to %s, protocol %s", client.server_info, client.protocol_version)
        client.list_tools()


def tools_call(url: str, context: dict) -> None:
    """Call add_numbers(a=5, b=3)."""
    with connect(url) as client:
        result = client.call_tool("add_numbers", {"a": 5, "b": 3})
        log.info("add_numbers: %s", result.text)


def elicitation_defaults(url: str, context: dict) -> None:
    """Accept an elicitation without filling anything: every field gets its schema default (SEP-1034)."""
    with connect(url, elicitation_handler=accept_form) as client:
        result = client.call_tool("test_client_elicitation_defaults")
        log.info("test_client_elicitation_defaults: %s", result.text)


def sse_retry(url: str, context: dict) -> None:
    """The server closes the tool's SSE stream; minimcp waits its retry delay and resumes with GET."""
    with connect(url) as client:
        # List first, as the reference clients do: minimcp opens its standalone GET stream in the
        # background after initialize, and this mock answers the call on any GET, so a GET that
        # comes after the call takes the answer the resumed stream should have carried.
        client.list_tools()
        result = client.call_tool("test_reconnection")
        log.info("test_reconnection: %s", result.text)


def json_schema_preservation(url: str, context: dict) -> None:
    """Send json_schema_2020_12_tool's inputSchema back, exactly as listed (unknown keywords kept)."""
    with connect(url) as client:
        tools = {tool.name: tool for tool in client.list_tools()}
        schema = tools["json_schema_2020_12_tool"].input_schema
        client.call_tool("json_schema_echo", {"schema": schema})


def json_schema_ref_no_deref(url: str, context: dict) -> None:
    """List a tool whose schema has a network $ref: minimcp never fetches it."""
    with connect(url) as client:
        for tool in client.list_tools():
            log.info("tool %s: %s", tool.name, json.dumps(tool.input_schema))


def request_metadata(url: str, context: dict) -> None:
    """2026-07-28: every request carries _meta (version, client info, capabilities) and the version header."""
    with connect(url, sampling_handler=answer_sampling, elicitation_handler=accept_form, roots=["."]) as client:
        # The mock server declares no capabilities, so call_tool() would refuse
        # before sending; request() is the escape hatch that sends any method.
        client.request("tools/call", {"name": "add_numbers", "arguments": {"a": 5, "b": 3}})


def http_standard_headers(url: str, context: dict) -> None:
    """Every kind of request once: minimcp adds Mcp-Method (and Mcp-Name for tools, prompts, resources)."""
    with connect(url) as client:
        for tool in client.list_tools():
            client.call_tool(tool.name)
        for resource in client.list_resources():  # URIs with %20 and a query string
            client.read_resource(resource.uri)
        for prompt in client.list_prompts():
            client.get_prompt(prompt.name)


def http_custom_headers(url: str, context: dict) -> None:
    """Replay the context's tool calls: arguments marked x-mcp-header also go in Mcp-Param-* headers."""
    with connect(url) as client:
        client.list_tools()  # reads the x-mcp-header annotations
        for call in context["toolCalls"]:
            client.call_tool(call["name"], call["arguments"])


def example_arguments(schema: dict) -> dict:
    """Made-up values for a tool's required arguments."""
    samples = {"string": "us-west1", "integer": 1, "number": 1.5, "boolean": True}
    properties = schema.get("properties") or {}
    return {name: samples.get(properties.get(name, {}).get("type"), "x") for name in schema.get("required") or ()}


def http_invalid_tool_headers(url: str, context: dict) -> None:
    """Call every tool list_tools() kept: it drops tools whose x-mcp-header annotations are invalid."""
    with connect(url) as client:
        for tool in client.list_tools():
            client.call_tool(tool.name, example_arguments(tool.input_schema))


def request_state(url: str, context: dict) -> None:
    """2026-07-28 input_required rounds: minimcp answers with the handlers and retries (SEP-2322)."""
    def answer(params: dict) -> dict:
        # Another call while test_mrtr_echo_state waits for this answer: it
        # must carry nothing of that call's round (inputResponses, requestState).
        client.call_tool("test_mrtr_unrelated")
        return {"action": "accept", "content": {"confirmed": True}}

    with connect(url, elicitation_handler=answer) as client:
        for name in ("test_mrtr_echo_state", "test_mrtr_no_state", "test_mrtr_no_result_type"):
            log.info("%s: %s", name, client.call_tool(name).text)


def skills_no_prefetch(url: str, context: dict) -> None:
    """List the skills and read none of their files: a listing is not a reason to fetch (SEP-2640)."""
    with connect(url) as client:
        for skill in list_skills(client):
            log.info("skill %s: %s (%s)", skill.name, skill.description, skill.uri)


def skills_verify(url: str, context: dict) -> None:
    """Load the first skill and then its references/FORMS.md: load_skill() checks the SKILL.md
    against its entry (size, digest, frontmatter) and refuses what does not match."""
    with connect(url) as client:
        skill = list_skills(client)[0]
        try:
            loaded = load_skill(client, skill)
        except SkillVerificationError as exc:
            log.warning("not loading %s: %s", skill.uri, exc)
            return
        log.info("loaded %s; its form guide has %d bytes", skill.name, len(loaded.read("references/FORMS.md")))


#: The client ID metadata document URL the suite accepts (auth/basic-cimd); used where a server supports CIMD.
CIMD_URL = "https://conformance-test.local/client-metadata.json"


def follow_redirect(authorization_url: str) -> str:
    """The "browser" of the auth scenarios: the suite's authorization endpoint redirects at once (no login page)."""
    import requests

    response = requests.get(authorization_url, allow_redirects=False, timeout=10)
    return response.headers.get("Location", "")


def auth_for(scenario: str, context: dict) -> Any:
    """The minimcp.client.auth flow a scenario needs; the authorization code flow unless it names another grant."""
    from minimcp.client.auth import ClientCredentials, EnterpriseAuth, JWTBearer, MemoryTokenStore, OAuth

    if scenario == "auth/client-credentials-jwt":
        return ClientCredentials(context["client_id"], private_key=context["private_key_pem"],
                                 signing_algorithm=context.get("signing_algorithm", "ES256"))
    if scenario == "auth/client-credentials-basic":
        return ClientCredentials(context["client_id"], client_secret=context["client_secret"])
    if scenario == "auth/enterprise-managed-authorization":
        return EnterpriseAuth(id_token=context["idp_id_token"], idp_token_endpoint=context["idp_token_endpoint"],
                              client_id=context["client_id"], client_secret=context.get("client_secret"),
                              idp_client_id=context.get("idp_client_id"))
    if scenario == "auth/wif-jwt-bearer":
        return JWTBearer(context["valid_jwt"], client_id=context.get("client_id"))
    # Pre-registered credentials come in the context (auth/pre-registration); the store is in memory
    # so that no run of the suite leaves a token in the user's config folder.
    return OAuth(client_id=context.get("client_id"), client_secret=context.get("client_secret"),
                 issuer=context.get("issuer"), client_metadata_url=CIMD_URL, store=MemoryTokenStore(),
                 browser=follow_redirect)


def authorized(url: str, context: dict) -> None:
    """Every auth/* scenario: connect with the scenario's OAuth flow, list the tools, call the first one."""
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    with connect(url, auth=auth_for(scenario, context)) as client:
        tools = client.list_tools()
        if tools:
            log.info("%s: %s", tools[0].name, client.call_tool(tools[0].name).text)


SCENARIOS: Dict[str, Callable[[str, dict], None]] = {
    "initialize": initialize,
    "tools_call": tools_call,
    "elicitation-sep1034-client-defaults": elicitation_defaults,
    "sse-retry": sse_retry,
    "json-schema-2020-12-preservation": json_schema_preservation,
    "json-schema-ref-no-deref": json_schema_ref_no_deref,
    "request-metadata": request_metadata,
    "http-standard-headers": http_standard_headers,
    "http-custom-headers": http_custom_headers,
    "http-invalid-tool-headers": http_invalid_tool_headers,
    "sep-2322-client-request-state": request_state,
    "sep-2640-client-no-prefetch": skills_no_prefetch,
    "sep-2640-client-verify-digest": skills_verify,
    "sep-2640-client-verify-size": skills_verify,
    "sep-2640-client-verify-frontmatter": skills_verify,
}


def main() -> int:
    logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    if len(sys.argv) != 2:
        print(f"usage: MCP_CONFORMANCE_SCENARIO=NAME {sys.argv[0]} SERVER_URL", file=sys.stderr)
        return 2
    url, scenario = sys.argv[1], os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    run = authorized if scenario.startswith("auth/") else SCENARIOS.get(scenario)
    if run is None:
        print(f"unknown scenario {scenario!r}; known: {', '.join(SCENARIOS)}", file=sys.stderr)
        return 2
    context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    log.info("scenario %s against %s, protocol %s", scenario, url, PROTOCOL)
    run(url, context)
    return 0


if __name__ == "__main__":
    sys.exit(main())
