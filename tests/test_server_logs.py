"""A server's log messages (``notifications/message``) reach a person: on stderr in the
``minimcp`` command, in the ``logging`` module (a logger named for the server) or ``on_log=``
in Python; and 2026-07-28's deprecation of logging (SEP-2577) is said once, on each side.

The server is a real stdio child (written to a temporary folder); the command runs as a
subprocess, as a person would run it.
"""

import logging
import subprocess
import warnings

import pytest

import minimcp

from conftest import PY

SERVER = '''
import logging
from minimcp import Context, Server

server = Server("loggy")


@server.tool()
def warn(ctx: Context) -> str:
    """Log at three levels."""
    ctx.log("warning", "the disk is almost full")
    ctx.log("info", {"free": "1%"}, logger="disk")
    ctx.log("debug", "fine detail")
    return "done"


@server.tool()
def bridged() -> str:
    """Log through the logging module (the server forwards the record)."""
    logging.getLogger("loggy.db").warning("a slow query")
    return "done"


@server.tool()
def level(ctx: Context) -> str:
    """The log level this request asked for (2026-07-28), or the connection's."""
    return str(ctx.meta.log_level if ctx.meta is not None else ctx.connection.log_level)


server.run()
'''
PROTOCOLS = ["auto", "2025-11-25"]  # 2026-07-28 (the level rides on each request), and the handshake


@pytest.fixture
def server_file(tmp_path):
    path = tmp_path / "loggy.py"
    path.write_text(SERVER, encoding="utf-8")
    return str(path)


def cli(*args):
    return subprocess.run([PY, "-m", "minimcp", *args], capture_output=True, text=True, encoding="utf-8",
                          stdin=subprocess.DEVNULL, timeout=60)


def test_minimcp_call_prints_the_servers_log_messages_on_stderr(server_file):
    """spec server/utilities/logging: the client asks for a level, the server sends that and above."""
    out = cli("call", "warn", "--", PY, server_file)
    assert out.returncode == 0, out.stderr
    assert out.stdout == "done\n"
    assert "server warning: the disk is almost full\n" in out.stderr
    assert 'server info [disk]: {"free": "1%"}\n' in out.stderr
    assert "fine detail" not in out.stderr
    warning_only = cli("call", "warn", "--log-level", "warning", "--", PY, server_file)
    assert "the disk is almost full" in warning_only.stderr and "free" not in warning_only.stderr
    quiet = cli("call", "warn", "-q", "--", PY, server_file)
    assert quiet.returncode == 0 and quiet.stdout == "done\n"
    assert "server " not in quiet.stderr and "the disk" not in quiet.stderr
    bad = cli("call", "warn", "--log-level", "loud", "--", PY, server_file)
    assert bad.returncode == 2 and "--log-level" in bad.stderr


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_client_without_on_log_logs_to_the_servers_logger(server_file, protocol, caplog):
    with minimcp.connect([PY, server_file], protocol=protocol, on_stderr=lambda line: None) as client:
        assert client.call_tool("level").text == "None"  # nobody would see them: none asked for
    caplog.set_level(logging.INFO, logger="minimcp.server_log")  # a level set: the client asks for it
    with minimcp.connect([PY, server_file], protocol=protocol, on_stderr=lambda line: None) as client:
        assert client.server_logger_name() == "minimcp.server_log.loggy"
        assert client.call_tool("level").text == "info"
        assert client.call_tool("warn").text == "done"
    records = [(r.name, r.levelno, r.getMessage()) for r in caplog.records if r.name.startswith("minimcp.server_log")]
    assert records == [("minimcp.server_log.loggy", logging.WARNING, "the disk is almost full"),
                       ("minimcp.server_log.loggy", logging.INFO, 'disk: {"free": "1%"}')]


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_on_log_alone_gets_info_and_above(server_file, protocol):
    logs = []
    with minimcp.connect([PY, server_file], protocol=protocol, on_log=logs.append,
                         on_stderr=lambda line: None) as client:
        assert client.call_tool("warn").text == "done"
    assert [entry["level"] for entry in logs] == ["warning", "info"]
    with minimcp.connect([PY, server_file], protocol=protocol, on_log=logs.append, log_level="debug",
                         on_stderr=lambda line: None) as client:
        assert client.call_tool("level").text == "debug"


def test_set_logging_level_says_once_that_2026_07_28_deprecates_logging(server_file):
    """SEP-2577 (2026-07-28) deprecates logging: it still works; the client says so, once."""
    with minimcp.connect([PY, server_file], on_stderr=lambda line: None) as client:
        assert client.protocol_version == "2026-07-28"
        with pytest.warns(DeprecationWarning, match="SEP-2577") as caught:
            client.set_logging_level("warning")
        assert caught[0].filename == __file__  # at the caller's line
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            client.set_logging_level("error")  # once
        assert client.call_tool("level").text == "error"
    with minimcp.connect([PY, server_file], protocol="2025-11-25", on_stderr=lambda line: None) as client:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            client.set_logging_level("warning")  # not deprecated in the handshake versions
        assert client.call_tool("level").text == "warning"


def test_the_server_says_once_that_ctx_log_is_deprecated_on_2026_07_28(server_file):
    """SEP-2577: a tool's ctx.log() on a 2026-07-28 request warns once; on a handshake one, never."""
    for protocol, expected in (("auto", 1), ("2025-11-25", 0)):
        stderr = []
        with minimcp.connect([PY, server_file], protocol=protocol, on_log=lambda params: None,
                             on_stderr=stderr.append) as client:
            assert client.call_tool("bridged").text == "done"  # the server's own forwarding: not the tool's
            assert client.call_tool("warn").text == "done"
            assert client.call_tool("warn").text == "done"
        said = [line for line in stderr if "DeprecationWarning" in line]
        assert len(said) == expected, stderr
        assert all("loggy.py" in line and "SEP-2577" in line for line in said)  # at the tool's own line


def test_a_servers_log_line_cannot_drive_the_terminal():
    """A server's text is shown, not obeyed: escape sequences (which could retitle the window,
    move the cursor or hide what follows) and other control characters come out escaped."""
    import io

    from minimcp.cli.output import ServerLogs

    shown = io.StringIO()
    ServerLogs(shown)({"level": "warning", "logger": "db\x1b[2J", "data": "a\x1b]0;pwned\x07b\tc\nd\x9bm"})
    line = shown.getvalue()
    assert line == "server warning [db\\x1b[2J]: a\\x1b]0;pwned\\x07b\tc\\nd\\x9bm\n"
    assert not any(ord(c) < 0x20 and c not in "\t\n" for c in line)
