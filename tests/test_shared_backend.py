"""Several workers sharing tasks and notifications through a real Redis (``RedisBackend``).

Every worker is a process of its own (tests/servers/shared_worker.py): built-in HTTP
servers and a gunicorn worker, behind a real HAProxy that balances round-robin, and
a real ``redis-server`` started on a free port (Debian's redis-server and haproxy;
.ci/run installs both). Nothing of minimcp is mocked. What they show:

- a task made on one worker is polled through the others, answered through another and
  cancelled through a third: its tool sees ``ctx.cancelled`` and the record stays cancelled;
- a worker killed while running a task: the task is reported ``failed`` after its lease,
  and the other worker's task goes on;
- a listener on one worker hears list changes and task status made on another, and a
  ``list_changed`` when Redis comes back after a restart;
- Redis refused, stopped (SIGSTOP) and back: the bounds of the issue, and a task-free call
  that sends Redis no command at all.
"""

import json
import os
import signal
import socket
import subprocess
import threading
import time

import pytest

import minimcp
from minimcp.client.stateless import Listener
from minimcp.errors import RPCError

from conftest import PY, ROOT, free_port, stop_process, system_program, wait_until_listening

redis = pytest.importorskip("redis", reason="the redis extra is needed: pip install 'minimcp-sync[redis]'")

REDIS_SERVER, HAPROXY = system_program("redis-server"), system_program("haproxy")
WORKER = os.path.join(ROOT, "tests", "servers", "shared_worker.py")
LEASE = 1.0  # seconds: short, so that a dead worker's task fails quickly
ACCEPT = {"action": "accept", "content": {"ok": True}}

# Skipped where the engines are missing, but not in CI: .ci/run installs them.
pytestmark = pytest.mark.skipif((REDIS_SERVER is None or HAPROXY is None) and not os.environ.get("CI"),
                                reason="redis-server and haproxy are needed (apt-get install redis-server haproxy)")


def until(check, seconds, what):
    """Poll ``check()`` (a state another process changes, which cannot signal us) until it is
    truthy, within ``seconds``; return its value."""
    deadline = time.monotonic() + seconds
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not within {seconds} s")
        time.sleep(0.02)


class RedisServer:
    """A redis-server of our own on a free 127.0.0.1 port, with no persistence."""

    def __init__(self, port=None):
        assert REDIS_SERVER is not None, "redis-server is not installed: .ci/run installs it (apt-get)"
        self.port = port or free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.proc = subprocess.Popen([REDIS_SERVER, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
                                      "--appendonly", "no", "--protected-mode", "no"],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        wait_until_listening(self.proc, self.port)
        self.client = redis.Redis(port=self.port, socket_timeout=5)

    def commands(self):
        """Commands Redis has processed so far (INFO counts itself too)."""
        return self.client.info("stats")["total_commands_processed"]

    def close(self):
        self.client.close()
        stop_process(self.proc)


class Worker:
    """tests/servers/shared_worker.py as a built-in HTTP server, or under gunicorn."""

    def __init__(self, redis_url, marks, gunicorn=False, prefix="minimcp:"):
        self.port = free_port()
        env = dict(os.environ, REDIS_URL=redis_url, MCP_LEASE=str(LEASE), MCP_MARKS=str(marks), MCP_PREFIX=prefix,
                   PYTHONPATH=ROOT)
        env.pop("MINIMCP_TRACE", None)
        if gunicorn:
            command = [PY, "-m", "gunicorn", "-b", f"127.0.0.1:{self.port}", "-w", "1", "-k", "gthread",
                       "--threads", "8", "--chdir", os.path.dirname(WORKER), "shared_worker:app"]
        else:
            command = [PY, WORKER, str(self.port)]
        self.proc = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        wait_until_listening(self.proc, self.port)
        self.url = f"http://127.0.0.1:{self.port}/mcp"

    def pid(self):
        """The pid of the process that serves (gunicorn's worker, not its arbiter)."""
        with self.connect() as client:
            return client.call_tool("whoami").structured["result"]

    def connect(self, **handlers):
        return connect(self.url, **handlers)

    def close(self):
        stop_process(self.proc)


class Balancer:
    """HAProxy, round-robin over the workers: each request to the next one (and to the one
    after it when a worker refuses the connection: a killed worker is passed over)."""

    def __init__(self, tmp_path, workers):
        assert HAPROXY is not None, "haproxy is not installed: .ci/run installs it (apt-get)"
        self.port = free_port()
        servers = "".join(f"    server w{n} 127.0.0.1:{w.port}\n" for n, w in enumerate(workers))
        config = tmp_path / "haproxy.cfg"
        config.write_text("defaults\n    mode http\n    timeout connect 2s\n    timeout client 30s\n"
                          "    timeout server 30s\n"
                          f"frontend mcp\n    bind 127.0.0.1:{self.port}\n    default_backend workers\n"
                          f"backend workers\n    balance roundrobin\n    option redispatch 1\n    retries 3\n"
                          f"    retry-on conn-failure empty-response\n{servers}")
        self.proc = subprocess.Popen([HAPROXY, "-db", "-f", str(config)], stdout=subprocess.DEVNULL,
                                     stderr=subprocess.PIPE)
        wait_until_listening(self.proc, self.port)
        self.url = f"http://127.0.0.1:{self.port}/mcp"

    def close(self):
        stop_process(self.proc, signal.SIGUSR1)  # HAProxy's soft stop


def get(client, task_id):
    """``tasks/get``, and nothing more (a TaskHandle would answer the task's questions)."""
    return client.request("tasks/get", {"taskId": task_id})


def connect(url, **handlers):
    """A 2026-07-28 client (tasks need that era) that accepts every elicitation."""
    handlers.setdefault("elicitation_handler", lambda params: ACCEPT)
    return minimcp.connect(url, protocol="2026-07-28", timeout=20, **handlers)


@pytest.fixture
def engine():
    running = RedisServer()
    yield running
    running.close()


@pytest.fixture
def marks(tmp_path):
    folder = tmp_path / "marks"
    folder.mkdir()
    return folder


@pytest.fixture
def cluster(tmp_path, engine, marks):
    """Three workers (two built-in servers, one gunicorn) behind HAProxy, sharing one Redis."""
    workers = []
    try:
        workers += [Worker(engine.url, marks), Worker(engine.url, marks), Worker(engine.url, marks, gunicorn=True)]
        balancer = Balancer(tmp_path, workers)
    except BaseException:
        for worker in workers:
            worker.close()
        raise
    yield workers, balancer
    balancer.close()
    for worker in workers:
        worker.close()


def test_a_task_is_polled_answered_and_cancelled_through_other_workers(cluster, marks):
    (one, two, three), balancer = cluster
    with one.connect() as maker, two.connect() as answerer, three.connect() as canceller, \
            connect(balancer.url) as poller:
        task = maker.start_task("ask_then_wait", {"tag": "t1"})
        # Polled round-robin through HAProxy (tasks/get alone, answering nothing): every
        # worker reads the record from Redis.
        seen = until(lambda: get(poller, task.task_id)["status"] == "input_required" and get(poller, task.task_id),
                     10, "the task asks its question")
        assert list(seen["inputRequests"]) == ["elicitation-1"]
        # Answered through worker two (tasks/update into the task's inbox, then a wake-up).
        assert answerer.task(task.task_id).refresh() in ("input_required", "working")
        until(lambda: (marks / "answered-t1-True").exists(), 10, "the tool gets the answer given on another worker")
        until(lambda: get(poller, task.task_id)["status"] == "working", 10, "the task works again")
        # Cancelled through worker three: the tool, on worker one, sees ctx.cancelled.
        canceller.task(task.task_id).cancel()
        until(lambda: (marks / "cancelled-t1").exists(), 10, "the tool sees ctx.cancelled")
        # The tool returned "stopped" after the cancel: the record stays cancelled, on every worker.
        for client in (maker, answerer, canceller, poller, poller, poller):
            assert get(client, task.task_id)["status"] == "cancelled"
        ended = poller.task(task.task_id)
        assert ended.refresh() == "cancelled"
        with pytest.raises(minimcp.errors.TaskCancelled):
            ended.result()


def test_the_official_sdk_client_is_served_by_every_worker_behind_the_balancer(cluster, official_sdk):
    # Its client (mcp 2.3) has no tasks: what it can check is that sessionless workers answer
    # its handshake-era requests, each on whichever worker the balancer picks.
    workers, balancer = cluster
    done = subprocess.run([official_sdk, os.path.join(ROOT, "tests", "interop", "official_round_robin.py"),
                           balancer.url, "9"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    answer = json.loads(done.stdout.strip().splitlines()[-1])
    assert "ask_then_wait" in answer["tools"] and "echo" in answer["tools"]
    assert set(answer["pids"]) == {worker.pid() for worker in workers}


def test_a_killed_workers_task_fails_after_its_lease_and_no_other_task_is_affected(cluster, marks):
    (one, two, _), balancer = cluster
    victim = one.pid()
    with one.connect() as doomed, two.connect() as other, connect(balancer.url) as poller:
        lost = doomed.start_task("sleep_task", {"seconds": 30})
        kept = other.start_task("sleep_task", {"seconds": 2 * LEASE + 1})
        until(lambda: (marks / f"running-{victim}").exists(), 10, "the task runs on worker one")
        os.kill(victim, signal.SIGKILL)
        killed = time.monotonic()
        failed = poller.task(lost.task_id)
        until(lambda: failed.refresh() == "failed", 10, "the dead worker's task is reported failed")
        # The lease (1 s), then the same lease seen overdue a whole lease later (what keeps an
        # outage of Redis from failing live tasks), with a generous margin for a loaded machine.
        assert time.monotonic() - killed < 2 * LEASE + 3
        assert "stopped" in failed.task["error"]["message"]
        assert socket.gethostname() not in failed.task["statusMessage"]  # which worker: the server's log only
        assert str(victim) not in failed.task["statusMessage"]
        with pytest.raises(RPCError) as error:
            failed.result()
        assert error.value.code == -32603
        # The other worker's task outlived two leases and completes.
        assert kept.wait(timeout=20).text.startswith("slept on")
    one.proc.wait(5)


def test_a_listener_hears_other_workers_changes_and_a_resync_after_redis_restarts(tmp_path, engine, marks):
    a, b = Worker(engine.url, marks), Worker(engine.url, marks)
    heard = []
    changed = threading.Event()

    def tools_changed():
        heard.append("tools")
        changed.set()
    try:
        with a.connect(on_tools_changed=tools_changed) as listener, b.connect() as changer:
            listener.listen(tools=True)
            until(lambda: engine.client.pubsub_numsub("minimcp:bus")[0][1] >= 1, 10, "worker a listens to the bus")
            changer.call_tool("add_tool", {"name": "late"})
            assert changed.wait(10), "a listener on worker a did not hear worker b's tools/list_changed"
            assert "late" in [tool.name for tool in changer.list_tools()]
            # Redis restarts (on the same port): what was published meanwhile is lost, so the
            # listeners are told that every list may have changed.
            changed.clear()
            engine.close()
            restarted = RedisServer(engine.port)
            engine.proc, engine.client = restarted.proc, restarted.client
            assert changed.wait(15), "no list_changed after the bus came back"
    finally:
        a.close()
        b.close()


def test_task_status_made_on_one_worker_reaches_a_task_listener_on_another(engine, marks):
    a, b = Worker(engine.url, marks), Worker(engine.url, marks)
    try:
        with b.connect() as maker:
            task = maker.start_task("sleep_task", {"seconds": 30})
            statuses = []
            got = threading.Event()

            def on_notification(method, params):
                if method == "notifications/tasks" and params.get("taskId") == task.task_id:
                    statuses.append(params["status"])
                    if params["status"] == "cancelled":
                        got.set()
            with a.connect(on_notification=on_notification) as client:
                # A listen request with the filter Client.listen() has no word for (taskIds).
                listener = client.stateless.listener = Listener(client.session, {"taskIds": [task.task_id]})
                listener.open(client.stateless.meta())
                until(lambda: engine.client.pubsub_numsub("minimcp:bus")[0][1] >= 2, 10, "both workers listen")
                task.cancel()  # on worker b: its status is published; worker a's listener hears it
                assert got.wait(10), f"the listener on worker a heard {statuses}"
                listener.close()
    finally:
        a.close()
        b.close()


def test_redis_refused_tasks_fail_clearly_and_other_calls_go_on(marks):
    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))  # bound, never listening: connections are refused
    port = closed.getsockname()[1]
    worker = Worker(f"redis://127.0.0.1:{port}/0", marks)
    try:
        with worker.connect() as client:
            started = time.monotonic()
            assert client.call_tool("echo", {"text": "hi"}).text == "hi"
            # task="optional": the server runs it without a task (its choice per request).
            assert client.call_tool("maybe_task", {"text": "x"}).text == "done x"
            # task="required": -32603, naming Redis.
            with pytest.raises(RPCError) as error:
                client.start_task("sleep_task", {"seconds": 1})
            assert error.value.code == -32603 and "(Redis)" in error.value.message
            assert f":{port}" not in error.value.message  # where it is: the server's log only (CWE-209)
            # tasks/get: -32603 naming Redis, never "unknown task".
            with pytest.raises(RPCError) as error:
                client.task("abcdefghijklmnopqrstuvwx").refresh()
            assert error.value.code == -32603 and "Redis" in error.value.message
            assert "no task" not in error.value.message
            assert time.monotonic() - started < 5  # refusals are quick: at most one retry each
    finally:
        worker.close()
        closed.close()


def test_a_stopped_redis_delays_only_what_needs_it_and_everything_resumes(engine, marks):
    worker = Worker(engine.url, marks)
    try:
        with worker.connect() as client:
            task = client.start_task("sleep_task", {"seconds": 0.1})
            assert task.wait(timeout=10).text.startswith("slept on")
            engine.proc.send_signal(signal.SIGSTOP)
            try:
                started = time.monotonic()
                assert client.call_tool("echo", {"text": "still here"}).text == "still here"
                assert time.monotonic() - started < 1.0  # no Redis on this path: not delayed
                started = time.monotonic()
                with pytest.raises(RPCError) as error:
                    client.task(task.task_id).refresh()
                waited = time.monotonic() - started
                assert error.value.code == -32603 and "Redis" in error.value.message
                # A 2 s command timeout and one retry: about 4 s, never the 58 s of redis-py's defaults.
                assert waited < 7, waited
            finally:
                engine.proc.send_signal(signal.SIGCONT)
            # Redis is back: the same worker answers from it, with no restart.
            assert until(lambda: _status(client, task.task_id), 10, "tasks/get answers again") == "completed"
    finally:
        worker.close()


def _status(client, task_id):
    try:
        return client.task(task_id).refresh()
    except RPCError:
        return None


def test_a_task_free_call_sends_redis_no_command(engine, marks):
    worker = Worker(engine.url, marks)
    try:
        with worker.connect() as client:
            client.call_tool("echo", {"text": "warm"})
            idle = engine.commands()
            idle = engine.commands() - idle  # what INFO itself adds
            before = engine.commands()
            for n in range(20):
                assert client.call_tool("echo", {"text": str(n)}).text == str(n)
            assert engine.commands() - before == idle
    finally:
        worker.close()


def test_an_ended_task_keeps_its_status_and_expires_with_its_ttl(engine):
    from minimcp import RedisBackend
    from minimcp.server.taskstore import TaskRecord

    one, two = RedisBackend(engine.url, prefix="unit:"), RedisBackend(engine.url, prefix="unit:")
    try:
        assert one.worker_id != two.worker_id  # two backends of one process are two workers
        record = TaskRecord("t-1", time.time(), 60000, 50, owner=" alice")
        assert one.save(record) is None
        assert engine.client.pttl("unit:task:t-1") > 60000  # running: its TTL and a few leases
        cancelled = two.load("t-1")
        cancelled.status = "cancelled"
        assert two.save(cancelled) is None
        assert 0 < engine.client.pttl("unit:task:t-1") <= 60000  # ended: its ttlMs from creation
        record.status, record.result = "completed", {"content": []}
        kept = one.save(record)  # the worker running it finishes after the cancel: refused
        assert kept is not None and kept.status == "cancelled"
        assert one.load("t-1").status == "cancelled"
        two.post("t-1", {"inputResponses": {"k": {"action": "decline"}}})
        assert one.take("t-1") == [{"inputResponses": {"k": {"action": "decline"}}}]
        assert one.take("t-1") == []
        assert "password" not in repr(RedisBackend("redis://user:password@127.0.0.1:1/0"))
    finally:
        one.close()
        two.close()


def test_a_redis_stall_longer_than_a_lease_fails_no_running_task(engine, marks):
    # The worker running a task cannot renew its lease while Redis is stopped; after, another
    # worker must give it time to renew before it reads the silence as death. A task that ends
    # during the stall is saved when Redis answers again (its thread never saw the failure).
    a, b = Worker(engine.url, marks), Worker(engine.url, marks)
    try:
        with a.connect() as maker, b.connect() as poller:
            long = maker.start_task("sleep_task", {"seconds": 6})
            short = maker.start_task("sleep_task", {"seconds": 1})
            assert get(poller, long.task_id)["status"] == "working"
            engine.proc.send_signal(signal.SIGSTOP)
            try:
                stalled = threading.Event()
                stalled.wait(2.5 * LEASE)  # the outage itself: longer than a lease (what is measured)
            finally:
                engine.proc.send_signal(signal.SIGCONT)
            assert until(lambda: _status(poller, short.task_id) == "completed", 15, "the task that ended "
                         "during the stall is saved as completed")
            for _ in range(5):  # polled through worker b while the lease catches up: never failed
                assert _status(poller, long.task_id) in ("working", None)
            handle = poller.task(long.task_id)
            assert handle.wait(timeout=20).text.startswith("slept on")
    finally:
        a.close()
        b.close()


def test_owner_keys_do_not_collide():
    from minimcp.server.auth.protection import Principal
    from minimcp.server.taskstore import owner_key

    keys = [owner_key(Principal("c d", issuer="https://as/x")), owner_key(Principal("d", issuer="https://as/x c")),
            owner_key(Principal("alice")), owner_key(" alice"), owner_key("alice")]
    assert len(set(keys)) == len(keys)
    assert owner_key(Principal("alice", issuer="i")) == owner_key(Principal("alice", ["more"], issuer="i"))

    class Anonymous:  # no __str__ of its own: its default names an address, not a caller
        pass
    with pytest.raises(TypeError, match="stable name"):
        owner_key(Anonymous())
