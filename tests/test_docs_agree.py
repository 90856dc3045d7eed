"""What the docstrings (and the documentation site) say is what the code does.

Each test pins one sentence of the docs that once disagreed with the behaviour
(issue 12, item 5). Resource not-found codes per era are pinned by
tests/test_server_features.py::test_unknown_resources_are_32002, and a read's
default cache scope by tests/test_versions.py (``notes://today``).
"""

import base64
import pydoc

import pytest

import minimcp
from minimcp.protocol.jsonrpc import INVALID_PARAMS

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 16


def test_rpcerror_from_a_tool_is_an_iserror_result_and_from_a_resource_the_answer():
    """errors.RPCError: raised in a tool it becomes isError; in a resource it is the JSON-RPC error."""
    server = minimcp.Server("agree")

    @server.tool()
    def refuse() -> str:
        """Refuses."""
        raise minimcp.RPCError(INVALID_PARAMS, "not today")

    @server.resource("agree://doc")
    def doc() -> str:
        raise minimcp.RPCError(INVALID_PARAMS, "not this one", {"why": "closed"})

    for protocol in ("2025-11-25", "2026-07-28"):
        with minimcp.connect("memory", server=server, protocol=protocol) as client:
            result = client.call_tool("refuse")
            assert result.is_error and "not today" in result.text
            with pytest.raises(minimcp.RPCError) as info:
                client.read_resource("agree://doc")
            assert (info.value.code, info.value.message, info.value.data) == (
                INVALID_PARAMS, "not this one", {"why": "closed"})
    assert "isError" in minimcp.RPCError.__doc__


def test_image_takes_a_path_or_bytes_and_says_what_to_do_with_base64(tmp_path):
    """content.Image: a str is a path, never base64; base64 text gets an error that says so."""
    path = tmp_path / "dot.png"
    path.write_bytes(PNG)
    from_path, from_bytes = minimcp.Image(str(path)), minimcp.Image(PNG)
    assert from_path.to_block() == from_bytes.to_block() == {
        "type": "image", "data": base64.b64encode(PNG).decode(), "mimeType": "image/png"}
    assert minimcp.Image(path).data == PNG  # an os.PathLike too
    for text in (base64.b64encode(PNG).decode(), base64.b64encode(PNG * 40).decode()):  # short, and too long a name
        with pytest.raises(FileNotFoundError, match=r"A str is the path of a file.*base64\.b64decode"):
            minimcp.Image(text)
    with pytest.raises(FileNotFoundError, match="Audio"):
        minimcp.Audio("UklGRiQAAABXQVZF")
    assert "never base64" in " ".join(minimcp.Image.__doc__.split())


def test_help_for_client_and_connect_lists_what_users_read():
    """help(Client) names server_info and protocol_version; connect()'s docstring names protocol=."""
    text = pydoc.render_doc(minimcp.Client, renderer=pydoc.plaintext)
    for attribute in ("server_info", "protocol_version", "server_capabilities", "instructions"):
        assert attribute in text
    assert "protocol:" in minimcp.connect.__doc__ and "2026-07-28" in minimcp.connect.__doc__
    assert "-32602" in minimcp.Client.read_resource.__doc__ and "-32002" in minimcp.Client.read_resource.__doc__
