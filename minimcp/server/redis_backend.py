"""A backend on Redis: task records, task control and the notification bus of several workers.

``pip install '.[redis]'`` from a checkout (redis-py; ``'minimcp-sync[redis]'`` once minimcp is
released), then give every worker the same one::

    server = Server("jobs", backend=RedisBackend("redis://redis.internal:6379/0"),
                    state_secret=os.environ["MCP_STATE_SECRET"].encode())

What lives in Redis (every key under ``prefix``):

- ``task:ID``, a hash: ``status`` and ``record`` (the JSON of a
  :class:`~minimcp.server.taskstore.TaskRecord`). One Lua script saves it and
  never replaces a record whose status has ended, so a ``tasks/cancel`` on one
  worker is not overwritten when the worker running the task finishes. An ended
  task expires with its ``ttlMs``; a running one a few leases after it, so that the
  record of a task whose worker died is still there to be reported ``failed``.
- ``inbox:ID``, a list: ``tasks/update`` answers posted by other workers, taken
  (read and deleted, atomically) by the worker running the task.
- the channel ``bus``: list changes, resource updates, task status and wake-ups,
  as JSON, each naming the worker that sent it.

Every command is bounded (redis-py's own defaults are not: seconds of timeouts and
several retries): connect within ``connect_timeout`` (0.5 s), answer within
``timeout`` (2 s), at most one retry. A worker sends to the bus from a thread of its
own, so a request never waits on a slow Redis to tell others; what could not be
sent is dropped, and once Redis answers again a ``resync`` tells every worker's
listeners to fetch their lists again. A request that needs Redis while it is down is
answered -32603 naming Redis (:class:`~minimcp.errors.BackendUnavailable`); a request
that does not need it (a tool call that makes no task) never touches it.
"""

from __future__ import annotations

import json
import os
import queue
import secrets
import socket
import threading
import time
import weakref
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Set
from urllib.parse import urlsplit

from ..engine.threads import join, start_thread
from ..errors import BackendUnavailable
from ..logs import get_logger, reference
from .backend import Backend, Deliver
from .taskstore import TaskRecord

if TYPE_CHECKING:
    from logging import Logger

log: Logger = get_logger(__name__)

# KEYS[1] the task's hash; ARGV: status, record JSON, expiry in ms (0: none), version.
# Extension "Task Status": a task that has ended never changes, whoever saves it (the stored
# record is returned). A running task's saves come from its one worker, each snapshot numbered:
# one older than the stored one arrived late and is dropped (0 is returned).
_SAVE = """
local kept = redis.call('HGET', KEYS[1], 'status')
if kept == 'completed' or kept == 'failed' or kept == 'cancelled' then
  return redis.call('HGET', KEYS[1], 'record')
end
local ending = ARGV[1] == 'completed' or ARGV[1] == 'failed' or ARGV[1] == 'cancelled'
if not ending and tonumber(redis.call('HGET', KEYS[1], 'version') or '-1') > tonumber(ARGV[4]) then
  return 0
end
redis.call('HSET', KEYS[1], 'status', ARGV[1], 'record', ARGV[2], 'version', ARGV[4])
if tonumber(ARGV[3]) > 0 then redis.call('PEXPIRE', KEYS[1], ARGV[3]) else redis.call('PERSIST', KEYS[1]) end
return false
"""

# KEYS[1] the task's inbox: its messages, and none left.
_TAKE = """
local messages = redis.call('LRANGE', KEYS[1], 0, -1)
redis.call('DEL', KEYS[1])
return messages
"""

_INBOX_TTL_MS = 3600 * 1000  # answers nobody took (the task ended meanwhile) go after an hour
_MAX_UNSENT = 10000  # messages waiting for the bus; past it they are dropped (and said so once)
_NO_TTL_MS = 24 * 3600 * 1000  # an ended task with no ttlMs is kept a day in Redis (not for ever)


class RedisBackend(Backend):
    """Task records, task control and the notification bus of several workers, in Redis.

    Args:
        url: ``redis://[user:password@]host:port/db`` (``rediss://`` for TLS), as redis-py reads it.
        prefix: put before every key and the channel; one per deployment sharing a Redis.
        lease: seconds a worker vouches for a task it runs (renewed every third of it); a task
            whose worker died is reported ``failed`` after it.
        connect_timeout, timeout: seconds to connect, and for a command's answer.
        client: a ``redis.Redis`` of your own (its own timeouts then apply); ``url`` is then only named in messages.
    """

    shared = True

    def __init__(self, url: str = "redis://127.0.0.1:6379/0", *, prefix: str = "minimcp:", lease: float = 10.0,
                 connect_timeout: float = 0.5, timeout: float = 2.0, client: Any = None) -> None:
        try:
            import redis
            from redis.backoff import NoBackoff
            from redis.retry import Retry
        except ImportError:
            raise ImportError("RedisBackend needs redis-py: pip install 'redis>=5' (minimcp's redis extra)") from None
        parts = urlsplit(url)
        #: Where Redis is, as the server's log names it (never with its password).
        self.address: str = f"{parts.hostname or 'localhost'}:{parts.port or 6379}{parts.path or ''}"
        self.prefix: str = prefix
        self.lease: float = lease
        self.timeout: float = timeout
        self.redis: Any = client if client is not None else redis.Redis.from_url(
            url, socket_connect_timeout=connect_timeout, socket_timeout=timeout,
            retry=Retry(NoBackoff(), 1), health_check_interval=0, socket_keepalive=True)
        self._errors: Any = (redis.RedisError, OSError)
        self._save = self.redis.register_script(_SAVE)
        self._take = self.redis.register_script(_TAKE)
        self._channel = prefix + "bus"
        self._pid = -1
        self._worker_id = ""
        self._unsent: queue.Queue[Optional[bytes]] = queue.Queue(_MAX_UNSENT)
        self._sender: Any = None
        self._listener: Any = None
        # Each thread started gets an Event of its own to stop at: one that close() could not join
        # in time still stops, and a later start never revives it.
        self._sender_stop = threading.Event()
        self._listener_stop = threading.Event()
        self._lock = threading.Lock()
        self._down = False  # the sender's last attempt failed: a resync follows the next success
        self._full_said = False
        self._last_failure = time.monotonic()  # (as if it had just failed: see steady_for())
        #: Messages queued and not yet sent: the same one twice is sent once (registering ten
        #: tools at start-up tells the other workers' listeners once).
        self._pending: Set[bytes] = set()
        _forget_threads_at_fork(self)

    def _forked(self) -> None:
        """In a child process just forked: no thread of the parent runs here, and a lock one of
        them held would stay held; start afresh (threads start again on first use)."""
        self._lock = threading.Lock()
        self._unsent = queue.Queue(_MAX_UNSENT)
        self._pending = set()
        self._sender = self._listener = None
        self._sender_stop, self._listener_stop = threading.Event(), threading.Event()

    def __repr__(self) -> str:
        return f"<RedisBackend {self.address} prefix={self.prefix!r} lease={self.lease:g}s>"

    @property
    def worker_id(self) -> str:  # type: ignore[override]
        """This backend's name on the bus and in records: host, pid and a random part (so two
        backends of one process are two workers; a fork gets its own)."""
        with self._lock:
            pid = os.getpid()
            if pid != self._pid:
                self._pid, self._worker_id = pid, f"{socket.gethostname()}:{pid}:{secrets.token_hex(3)}"
            return self._worker_id

    def steady_for(self) -> float:
        """Seconds Redis has answered this process without a failure (since this backend was made,
        at most): a worker just back from an outage gives the others time to renew their leases."""
        return time.monotonic() - self._last_failure

    def _unavailable(self, exc: BaseException, doing: str) -> BackendUnavailable:
        # The client learns that the store is away, not where it is or what redis-py said
        # (CWE-209): those go to the log, under the reference the client gets.
        self._last_failure = time.monotonic()
        ref = reference()
        log.warning("Redis at %s: %s while %s (ref %s)", self.address, f"{type(exc).__name__}: {exc}", doing, ref)
        return BackendUnavailable(f"the task store (Redis) did not answer while {doing} (ref {ref}); try again "
                                  f"shortly")

    # -- task records --------------------------------------------------------------------------------

    def save(self, record: TaskRecord) -> Optional[TaskRecord]:
        """Save ``record`` in one script that keeps (and returns) a record that has ended, and drops
        a snapshot older than the stored one."""
        floor = int(3 * self.lease * 1000)  # what other workers need to see an end (a cancel, say)
        if record.terminal:  # an ended task goes with its ttlMs, counted from its creation
            left = _NO_TTL_MS if record.ttl_ms is None else int(record.created * 1000 + record.ttl_ms
                                                                 - time.time() * 1000)
            expiry = max(left, floor)
        else:  # a running one outlives its lease, so that a dead worker's task is reported failed
            expiry = 0 if record.ttl_ms is None else max(int(record.created * 1000 + record.ttl_ms
                                                             - time.time() * 1000), 0) + floor
        try:
            kept = self._save(keys=[self.prefix + "task:" + record.task_id],
                              args=[record.status, record.to_json(), expiry, record.version])
        except self._errors as exc:
            raise self._unavailable(exc, "saving a task") from None
        return TaskRecord.from_json(kept) if isinstance(kept, (bytes, str)) else None
    def load(self, task_id: str) -> Optional[TaskRecord]:
        """The record of ``task_id``, or None if unknown or expired."""
        try:
            text = self.redis.hget(self.prefix + "task:" + task_id, "record")
        except self._errors as exc:
            raise self._unavailable(exc, "reading a task") from None
        return None if text is None else TaskRecord.from_json(text)

    def delete(self, task_id: str) -> None:
        """Forget ``task_id`` and its inbox."""
        try:
            self.redis.delete(self.prefix + "task:" + task_id, self.prefix + "inbox:" + task_id)
        except self._errors as exc:
            raise self._unavailable(exc, "deleting a task") from None

    # -- task control ----------------------------------------------------------------------------------

    def post(self, task_id: str, message: Dict[str, Any]) -> None:
        """Append ``message`` to the task's inbox (kept an hour if no one takes it)."""
        key = self.prefix + "inbox:" + task_id
        try:
            with self.redis.pipeline(transaction=True) as pipe:
                pipe.rpush(key, json.dumps(message, separators=(",", ":")))
                pipe.pexpire(key, _INBOX_TTL_MS)
                pipe.execute()
        except self._errors as exc:
            raise self._unavailable(exc, "handing answers to a task") from None

    def take(self, task_id: str) -> List[Dict[str, Any]]:
        """Remove and return the task's inbox, in one script."""
        try:
            messages = self._take(keys=[self.prefix + "inbox:" + task_id])
        except self._errors as exc:
            raise self._unavailable(exc, "reading a task's answers") from None
        return [json.loads(text) for text in messages]

    # -- the bus ---------------------------------------------------------------------------------------------

    def publish(self, message: Dict[str, Any]) -> None:
        """Queue ``message`` for the other workers; the sender thread publishes it."""
        data = json.dumps(dict(message, sender=self.worker_id), separators=(",", ":")).encode()
        with self._lock:
            if data in self._pending:
                return
            if self._sender is None or not self._sender.is_alive():
                stop = self._sender_stop = threading.Event()
                self._sender = start_thread(lambda: self._send(stop), "redis-publish")
            self._pending.add(data)
        try:
            self._unsent.put_nowait(data)
        except queue.Full:
            with self._lock:
                self._pending.discard(data)
            if not self._full_said:
                self._full_said = True
                log.warning("Redis at %s: %d messages wait to be published; dropping more until it answers",
                            self.address, _MAX_UNSENT)

    def _send(self, stop: threading.Event) -> None:
        while not stop.is_set():
            try:
                data = self._unsent.get(timeout=1.0)  # bounded: stop is seen within a second
            except queue.Empty:
                if self._down:  # nothing to send: see whether Redis is back, to say resync at once
                    self._publish(None)
                continue
            if data is None:
                return
            with self._lock:
                self._pending.discard(data)
            self._publish(data)

    def _publish(self, data: Optional[bytes]) -> None:
        try:
            if self._down:  # what was lost while Redis was away: every listener fetches its lists again
                self.redis.publish(self._channel, json.dumps({"kind": "resync", "sender": self.worker_id}))
                log.warning("Redis at %s answers again: publishing resumed", self.address)
                self._down = self._full_said = False
            if data is not None:
                self.redis.publish(self._channel, data)
        except self._errors as exc:
            self._last_failure = time.monotonic()
            if not self._down:
                log.warning("Redis at %s: could not publish (%s: %s); messages are dropped until it "
                            "answers", self.address, type(exc).__name__, exc)
                self._down = True
            with self._lock:
                self._pending.clear()
            while True:  # what waits is stale by now: the resync that follows stands for it all
                try:
                    if self._unsent.get_nowait() is None:
                        self._unsent.put_nowait(None)  # (close() asked this thread to end)
                        return
                except queue.Empty:
                    return

    def listen(self, deliver: Deliver) -> None:
        """Start the thread that hands every other worker's message to ``deliver`` (again in a
        process forked after it started: threads do not survive a fork)."""
        with self._lock:
            if self._listener is None or not self._listener.is_alive():
                stop = self._listener_stop = threading.Event()
                self._listener = start_thread(lambda: self._listen(deliver, stop), "redis-listen")

    def _listen(self, deliver: Deliver, stop: threading.Event) -> None:
        me, failed, pause = self.worker_id, False, 0.05
        beat = min(self.lease / 3, 3.0)  # how often the connection is checked with a PING
        while not stop.is_set():
            pubsub = self.redis.pubsub(ignore_subscribe_messages=True)
            try:
                pubsub.subscribe(self._channel)
                if failed:  # messages may have been missed while away (pub/sub keeps none)
                    log.warning("Redis at %s answers again: listening resumed", self.address)
                    deliver({"kind": "resync"})
                failed, pause = False, 0.05
                pinged, answered = time.monotonic(), True
                while not stop.is_set():
                    now = time.monotonic()
                    if not answered and now - pinged > beat + self.timeout:
                        # A connection that went silent (a dead peer, a NAT that forgot it) reads
                        # nothing for ever: no answer to a PING is a failure like any other.
                        raise ConnectionError(f"no answer to PING within {self.timeout:g}s")
                    if answered and now - pinged > beat:
                        pubsub.ping()
                        pinged, answered = now, False
                    # The read blocks at most 1 s, below the socket timeout: a quiet bus is not an error.
                    raw = pubsub.get_message(timeout=1.0)
                    if raw is None:
                        continue
                    if raw.get("type") == "pong":
                        answered = True
                        continue
                    if raw.get("type") != "message":
                        continue
                    try:
                        message = json.loads(raw["data"])
                    except ValueError:
                        continue
                    if type(message) is dict and message.get("sender") != me:
                        self._deliver(deliver, message)
            except self._errors as exc:
                self._last_failure = time.monotonic()
                if not failed:
                    log.warning("Redis at %s: listening failed (%s: %s); reconnecting", self.address,
                                type(exc).__name__, exc)
                failed = True
            finally:
                try:
                    pubsub.close()
                except self._errors:
                    pass
            stop.wait(pause)  # a bounded back-off between attempts, cut short by close()
            pause = min(pause * 2, 1.0)

    @staticmethod
    def _deliver(deliver: Deliver, message: Dict[str, Any]) -> None:
        try:
            deliver(message)
        except Exception:  # a listener's failure must not stop the bus
            log.exception("a bus message could not be delivered: %.200r", message)

    def close(self) -> None:
        """Stop the bus threads (joined) and close the connections; using it again starts them again."""
        with self._lock:
            sender, listener, self._sender, self._listener = self._sender, self._listener, None, None
            sender_stop = self._sender_stop
            self._listener_stop.set()
        if sender is not None:
            try:
                self._unsent.put_nowait(None)  # after what was queued: that is sent first, within its bounds
            except queue.Full:
                sender_stop.set()  # no room to say it: the sender sees its stop within a second
            join(sender, self.timeout * 2 + 1)
            sender_stop.set()  # (stuck on a hung Redis past the join: it stops at its next turn)
        if listener is not None:
            join(listener, self.timeout * 2 + 1)
        try:
            self.redis.close()  # (redis-py reconnects on the next command)
        except self._errors:
            pass


def _forget_threads_at_fork(backend: RedisBackend) -> None:
    """Have a forked child start ``backend``'s threads afresh (gunicorn's ``--preload`` forks
    workers from a process that may have published already)."""
    if hasattr(os, "register_at_fork"):
        ref = weakref.ref(backend)

        def forked() -> None:
            alive = ref()
            if alive is not None:
                alive._forked()
        os.register_at_fork(after_in_child=forked)
