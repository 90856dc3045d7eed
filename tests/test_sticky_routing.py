"""Sticky routing of handshake-era sessions over several workers: examples/deploy/haproxy.cfg and
examples/deploy/nginx-sticky.conf, run for real (ports rewritten) in front of two worker processes,
a gunicorn (one worker process, examples/deploy/gunicorn.conf.py) and a built-in server
(``server.run("http")``).

A session lives in the memory of the worker that answered its ``initialize``, which carries no
``Mcp-Session-Id``: hashing the header sends the follow-ups anywhere (the naive configs below lose
about half the sessions). HAProxy learns each id from the response; nginx maps the id's prefix
(``wsgi_app(session_id_prefix="w1.")``) to its worker. Tested: 200 sessions of 10 calls, 0 ``404``;
a killed worker's sessions get ``404`` through the balancer and minimcp's client starts a new one
by itself; 2026-07-28 requests (no session) go to any worker, retries signed by one worker
accepted by another (one ``state_secret``); the 2024-11-05 ``/sse`` endpoints, pinned to one worker.

The measured figures are printed: ``pytest -s tests/test_sticky_routing.py -k "200_sessions or hashing"``.
haproxy and nginx come from Debian (``apt-get install haproxy nginx-light``; .ci/run installs them).
"""

import concurrent.futures
import http.client
import json
import os
import re
import signal
import subprocess

import pytest

import minimcp
from minimcp import Server
from minimcp.protocol.jsonrpc import SESSION_NOT_FOUND
from minimcp.server.http.wsgiserver import BackgroundServer

from conftest import PY, ROOT, free_port, stop_process, system_program, wait_until_listening

HAPROXY, NGINX = system_program("haproxy"), system_program("nginx")
DEPLOY = os.path.join(ROOT, "examples", "deploy")
#: The shipped files' addresses, which the tests rewrite to free ports.
W1, W2, FRONT = "127.0.0.1:8001", "127.0.0.1:8002", "127.0.0.1:8080"
SESSIONS, CALLS = 200, 10
HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}

#: The app each worker runs: its tool says which worker answered.
WORKER_MODULE = '''
import os

from minimcp import Context, Server

WORKER = os.environ["MCP_WORKER"]
PREFIX = os.environ.get("MCP_SESSION_ID_PREFIX", "")
server = Server("sticky", state_secret=os.environ["MCP_STATE_SECRET"].encode())


@server.tool()
def where(n: int = 0) -> str:
    """Which worker answers."""
    return f"{WORKER} {n}"


@server.tool()
def confirm(ctx: Context) -> str:
    """Asks the client first: over 2026-07-28 an input_required, retried on any worker."""
    answer = ctx.elicit("Go on?", {"type": "object", "properties": {"ok": {"type": "boolean"}}})
    return f"{answer['action']} {WORKER}"


if __name__ == "__main__":
    server.run("http", port=int(os.environ["PORT"]), session_id_prefix=PREFIX, quiet=True)
else:
    app = server.wsgi_app(session_id_prefix=PREFIX)
'''

needs = {"haproxy": pytest.mark.skipif(HAPROXY is None and not os.environ.get("CI"),
                                       reason="haproxy is not installed (apt-get install haproxy)"),
         "nginx": pytest.mark.skipif(NGINX is None and not os.environ.get("CI"),
                                     reason="nginx is not installed (apt-get install nginx-light)")}
BALANCERS = [pytest.param("haproxy", marks=needs["haproxy"]), pytest.param("nginx", marks=needs["nginx"])]


class Deployment:
    """Two workers, w1 (gunicorn, one worker process) and w2 (``server.run("http")``), behind
    ``balancer`` with the shipped config file (or, ``naive=True``, that file hashing the header)."""

    def __init__(self, tmp_path, balancer, naive=False):
        self.tmp, self.procs = tmp_path, []
        (tmp_path / "sticky_worker.py").write_text(WORKER_MODULE)
        self.ports = {"w1": free_port(), "w2": free_port()}
        self.port = free_port()
        try:
            # Session ids that name their worker: nginx's map needs them, HAProxy's stick table not.
            self.prefixes = balancer == "nginx"
            self.workers = {name: self._worker(name) for name in ("w1", "w2")}
            for name, proc in self.workers.items():
                wait_until_listening(proc, self.ports[name])
            self.balancer = self._haproxy(naive) if balancer == "haproxy" else self._nginx(naive)
            wait_until_listening(self.balancer, self.port)
        except BaseException:
            self.close()
            raise
        self.url = f"http://127.0.0.1:{self.port}/mcp"

    def _worker(self, name):
        env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(self.tmp), ROOT]), MCP_WORKER=name,
                   MCP_STATE_SECRET="one secret for every worker", PORT=str(self.ports[name]),
                   MCP_BIND=f"127.0.0.1:{self.ports[name]}", MCP_WORKERS="1")
        if self.prefixes:
            env["MCP_SESSION_ID_PREFIX"] = f"{name}."
        command = ([PY, "-m", "gunicorn", "-c", os.path.join(DEPLOY, "gunicorn.conf.py"), "sticky_worker:app"]
                   if name == "w1" else [PY, str(self.tmp / "sticky_worker.py")])
        proc = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        self.procs.append(proc)
        return proc

    def _ported(self, filename):
        """The shipped file, its addresses rewritten to this deployment's ports."""
        with open(os.path.join(DEPLOY, filename)) as f:
            conf = f.read()
        for shipped, port in ((W1, self.ports["w1"]), (W2, self.ports["w2"]), (FRONT, self.port)):
            assert shipped in conf, f"{filename} no longer names {shipped}: rewrite this test's ports"
            conf = conf.replace(shipped, f"127.0.0.1:{port}")
        return conf

    def _haproxy(self, naive):
        conf = self._ported("haproxy.cfg")
        if naive:  # what the documentation used to say: hash the header
            conf = re.sub(r"\n    stick.*", "", conf).replace("balance roundrobin", "balance hdr(mcp-session-id)")
        (self.tmp / "haproxy.cfg").write_text(conf)
        return self._start([HAPROXY, "-db", "-f", str(self.tmp / "haproxy.cfg")])

    def _nginx(self, naive):
        conf = self._ported("nginx-sticky.conf")
        if naive:
            conf = conf.replace("upstream minimcp_any {", "upstream minimcp_any {\n    hash $http_mcp_session_id consistent;")
            conf = conf.replace("proxy_pass http://$minimcp_worker;", "proxy_pass http://minimcp_any;")
        (self.tmp / "mcp.conf").write_text(conf)
        # What /etc/nginx/nginx.conf would hold, pointed at the test's folder.
        (self.tmp / "nginx.conf").write_text(
            ("user root;\n" if os.geteuid() == 0 else "")
            + f"daemon off;\nworker_processes 1;\npid {self.tmp}/nginx.pid;\nerror_log {self.tmp}/error.log warn;\n"
            "events { worker_connections 1024; }\n"
            f"http {{ access_log off; client_body_temp_path {self.tmp}/body; proxy_temp_path {self.tmp}/proxy;\n"
            f"       include {self.tmp}/mcp.conf; }}\n")
        return self._start([NGINX, "-p", str(self.tmp), "-c", str(self.tmp / "nginx.conf")])

    def _start(self, command):
        proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        self.procs.append(proc)
        return proc

    def kill(self, name):
        """SIGKILL a worker by its PID: it ends with no goodbye, as a crashed process does."""
        proc = self.workers[name]
        proc.kill()
        proc.wait(10)

    def close(self):
        for proc in reversed(self.procs):  # the balancer first
            stop_process(proc, signal.SIGQUIT if proc.args[0] == NGINX else signal.SIGTERM)


@pytest.fixture
def deployment(tmp_path, request):
    balancer, naive = request.param if isinstance(request.param, tuple) else (request.param, False)
    running = Deployment(tmp_path, balancer, naive)
    yield running
    running.close()


# -- raw HTTP, for speed: 2,600 requests per configuration ------------------------------------------------------

def _post(conn, message, session_id=None):
    """POST one message; (status, answer or None, the response's Mcp-Session-Id)."""
    headers = dict(HEADERS, **{"MCP-Protocol-Version": "2025-11-25"})
    if session_id is not None:
        headers["Mcp-Session-Id"] = session_id
    conn.request("POST", "/mcp", json.dumps(message), headers)
    response = conn.getresponse()
    body = response.read().decode()
    answer = None
    if response.status == 200:
        if response.getheader("Content-Type", "").startswith("text/event-stream"):
            body = [line[5:] for line in body.splitlines() if line.startswith("data:") and '"id"' in line][-1]
        answer = json.loads(body)
    elif body:
        answer = json.loads(body)  # minimcp's errors carry a JSON-RPC error body
    return response.status, answer, response.getheader("Mcp-Session-Id")


def _session(port):
    """One handshake-era session of CALLS calls: (its id, the status of each request after
    ``initialize``, the workers that answered)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        status, answer, session_id = _post(conn, {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "sticky", "version": "0"}}})
        assert status == 200 and session_id, (status, answer)
        statuses, workers = [_post(conn, {"jsonrpc": "2.0", "method": "notifications/initialized"}, session_id)[0]], set()
        for n in range(CALLS):
            status, answer, _ = _post(conn, {"jsonrpc": "2.0", "id": n + 1, "method": "tools/call",
                                             "params": {"name": "where", "arguments": {"n": n}}}, session_id)
            statuses.append(status)
            if status == 200:
                worker, echoed = answer["result"]["content"][0]["text"].split()
                assert echoed == str(n)
                workers.add(worker)
        conn.request("DELETE", "/mcp", headers={"Mcp-Session-Id": session_id})
        conn.getresponse().read()
        return session_id, statuses, workers
    finally:
        conn.close()


def _sessions(deployment):
    """SESSIONS sessions, 16 at a time: (served, 404, the sessions each worker served)."""
    with concurrent.futures.ThreadPoolExecutor(16) as pool:
        results = list(pool.map(lambda _: _session(deployment.port), range(SESSIONS)))
    lost = sum(1 for _, statuses, _ in results if 404 in statuses)
    served = sum(1 for _, statuses, _ in results if statuses == [202] + [200] * CALLS)
    by_worker = {"w1": [], "w2": []}
    for session_id, statuses, workers in results:
        assert statuses[0] in (202, 404) and set(statuses[1:]) <= {200, 404}, statuses
        assert len(workers) <= 1, f"session {session_id} was answered by {workers}"
        for worker in workers:
            by_worker[worker].append(session_id)
    return served, lost, by_worker


@pytest.mark.parametrize("deployment", BALANCERS, indirect=True)
def test_200_sessions_of_10_calls_all_reach_their_worker(deployment, capsys):
    served, lost, by_worker = _sessions(deployment)
    with capsys.disabled():
        print(f"\n{os.path.basename(deployment.balancer.args[0])} (shipped): {served} sessions served, {lost} 404")
    assert (served, lost) == (SESSIONS, 0)
    # Both workers took their share (so sticking was needed), each session its minter's.
    assert len(by_worker["w1"]) >= SESSIONS // 4 and len(by_worker["w2"]) >= SESSIONS // 4
    if deployment.prefixes:
        for worker, ids in by_worker.items():
            assert all(session_id.startswith(worker + ".") for session_id in ids)


@pytest.mark.parametrize("deployment", [pytest.param(("haproxy", True), marks=needs["haproxy"]),
                                        pytest.param(("nginx", True), marks=needs["nginx"])], indirect=True)
def test_hashing_the_session_id_header_loses_sessions(deployment, capsys):
    """Why the shipped files do not: ``initialize`` has no id to hash."""
    served, lost, _ = _sessions(deployment)
    with capsys.disabled():
        print(f"\n{os.path.basename(deployment.balancer.args[0])} hashing the header: "
              f"{served} sessions served, {lost} 404")
    assert lost >= SESSIONS // 5 and served + lost == SESSIONS


def test_the_shipped_configs_do_not_hash_the_session_id_header():
    def directives(name):  # the file without its comments (they say why not)
        with open(os.path.join(DEPLOY, name)) as f:
            return "\n".join(line.split("#")[0].strip() for line in f)

    for name in ("nginx.conf", "nginx-sticky.conf"):
        assert not re.search(r"^hash ", directives(name), re.M), name
    assert "map $http_mcp_session_id $minimcp_worker {" in directives("nginx-sticky.conf")
    haproxy = directives("haproxy.cfg")
    assert "balance roundrobin" in haproxy and "hdr(" not in haproxy.replace(".hdr(mcp-session-id)", "")
    assert "stick store-response res.hdr(mcp-session-id)" in haproxy and "option redispatch" in haproxy


# -- a worker that dies ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("deployment", BALANCERS, indirect=True)
def test_a_dead_workers_sessions_get_404_and_the_client_starts_anew(deployment):
    clients, where = [], {}
    try:
        for _ in range(8):  # initialize goes round robin: both workers within a few clients
            client = minimcp.connect(deployment.url, protocol="2025-11-25", timeout=10)
            clients.append(client)
            where[client] = client.call_tool("where").text.split()[0]
            if len(set(where.values())) == 2 and len(clients) >= 4:
                break
        on_w2 = [client for client in clients if where[client] == "w2"]
        on_w1 = [client for client in clients if where[client] == "w1"]
        assert on_w1 and on_w2, where
        old = {client: client.session.transport.session_id for client in clients}

        deployment.kill("w2")  # the built-in server

        # What a client without minimcp sees: 404 and the session-not-found error, from w1.
        conn = http.client.HTTPConnection("127.0.0.1", deployment.port, timeout=10)
        try:
            status, answer, _ = _post(conn, {"jsonrpc": "2.0", "id": 1, "method": "ping"}, old[on_w2[0]])
        finally:
            conn.close()
        assert status == 404 and answer["error"]["code"] == SESSION_NOT_FOUND, (status, answer)

        # minimcp's client: the call goes on, in a new session on the live worker.
        for client in clients:
            assert client.call_tool("where", {"n": 1}).text == "w1 1"
        for client in on_w2:
            assert client.session.transport.session_id != old[client]
            assert client.session.transport.session_id.startswith("w1.") or not deployment.prefixes
        for client in on_w1:
            assert client.session.transport.session_id == old[client]
    finally:
        for client in clients:
            client.close()


# -- what needs no stickiness --------------------------------------------------------------------------------

@pytest.mark.parametrize("deployment", BALANCERS, indirect=True)
def test_2026_07_28_requests_go_to_any_worker_and_legacy_sse_to_one(deployment):
    accept = {"action": "accept", "content": {"ok": True}}
    with minimcp.connect(deployment.url, protocol="2026-07-28", timeout=10,
                         elicitation_handler=lambda params: accept) as client:
        assert {client.call_tool("where", {"n": n}).text.split()[0] for n in range(6)} == {"w1", "w2"}
        # An input_required answered by one worker, its retry by the other: one state_secret.
        answers = {client.call_tool("confirm").text for _ in range(4)}
        assert answers <= {"accept w1", "accept w2"} and answers, answers
    # The 2024-11-05 HTTP+SSE transport: its session id is in the /sse stream, where no proxy
    # reads it; the shipped files send it all to w1.
    with minimcp.connect(deployment.url.replace("/mcp", "/sse"), timeout=10) as legacy:
        assert [legacy.call_tool("where", {"n": n}).text for n in range(4)] == [f"w1 {n}" for n in range(4)]


# -- the prefix itself, no proxy needed ----------------------------------------------------------------------

def test_session_ids_start_with_the_prefix_and_a_bad_prefix_is_refused():
    server = Server("prefixed")
    with BackgroundServer(server.wsgi_app(session_id_prefix="w7.")) as running:
        with minimcp.connect(running.url + "/mcp", protocol="2025-11-25", timeout=10) as client:
            client.ping()
            assert re.fullmatch(r"w7\.[A-Za-z0-9_-]{32}", client.session.transport.session_id)
    for bad in ("w 1", "wé", "w1\n", "x" * 33):
        with pytest.raises(ValueError, match="session_id_prefix=.*at most 32 visible ASCII characters"):
            server.wsgi_app(session_id_prefix=bad)
        with pytest.raises(ValueError, match="session_id_prefix"):
            server.run("http", port=0, session_id_prefix=bad)  # refused before anything listens
    with pytest.raises(ValueError, match=r"run\('stdio'\) has none"):
        server.run("stdio", session_id_prefix="w1.")
