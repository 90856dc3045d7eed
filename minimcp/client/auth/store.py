"""Where tokens and client registrations are kept between runs.

A store maps a key (a tuple of strings) to a JSON object. minimcp keeps:

- ``("token", issuer, resource)``: the tokens one authorization server issued for one MCP server;
- ``("client", issuer)``: this client's registration with an authorization server
  (registration state is per authorization server: spec "Client Registration");
- ``("server", server_url)``: which issuer and resource the last login at that URL used,
  so a new process finds its token without a round of discovery.

``FileTokenStore`` (the default) writes one file per key, mode 0600, in the
user's config folder; ``MemoryTokenStore`` forgets everything at exit.

Every folder ``FileTokenStore`` creates on the way to its own is mode 0700,
whatever the umask (the XDG Base Directory spec asks for 0700 for a folder it
creates); and on POSIX it refuses a folder that group or others can write to,
or that another user owns (root aside: root can write anywhere anyway):
whoever can write there, the owner by a ``chmod`` of their own, can plant a
registration or a token record that the client then trusts.
"""

import hashlib
import json
import os
import stat
import sys
import threading
from typing import Any, Dict, Iterator, Optional, Tuple

from ...errors import AuthError

Key = Tuple[str, ...]


class TokenStore:
    """The interface: ``load()``, ``save()``, ``delete()``, ``items()``. Subclass it to keep tokens elsewhere."""

    def load(self, key: Key) -> Optional[Dict[str, Any]]:
        """The object saved under ``key``, or ``None``."""
        raise NotImplementedError

    def save(self, key: Key, value: Dict[str, Any]) -> None:
        """Keep ``value`` under ``key`` (replacing what was there)."""
        raise NotImplementedError

    def delete(self, key: Key) -> None:
        """Forget ``key`` (no error if it is not there)."""
        raise NotImplementedError

    def items(self) -> Iterator[Tuple[Key, Dict[str, Any]]]:
        """Every ``(key, value)`` kept (``minimcp logout`` walks them)."""
        raise NotImplementedError


class MemoryTokenStore(TokenStore):
    """A store that lives as long as the object: for tests and short-lived services."""

    def __init__(self) -> None:
        self._data: Dict[Key, Dict[str, Any]] = {}
        self._lock = threading.Lock()

    def load(self, key: Key) -> Optional[Dict[str, Any]]:
        """The object saved under ``key``, or ``None``."""
        with self._lock:
            value = self._data.get(tuple(key))
        return dict(value) if value is not None else None

    def save(self, key: Key, value: Dict[str, Any]) -> None:
        """Keep a copy of ``value`` under ``key``."""
        with self._lock:
            self._data[tuple(key)] = dict(value)

    def delete(self, key: Key) -> None:
        """Forget ``key``."""
        with self._lock:
            self._data.pop(tuple(key), None)

    def items(self) -> Iterator[Tuple[Key, Dict[str, Any]]]:
        """Every ``(key, value)`` kept."""
        with self._lock:
            return iter(list(self._data.items()))


def default_folder() -> str:
    """``$XDG_CONFIG_HOME/minimcp/oauth`` (``~/.config/minimcp/oauth``), or ``%APPDATA%\\minimcp\\oauth``."""
    if sys.platform == "win32" and os.environ.get("APPDATA"):
        base = os.environ["APPDATA"]
    else:
        base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return os.path.join(base, "minimcp", "oauth")


class FileTokenStore(TokenStore):
    """One JSON file per key in ``folder`` (default: :func:`default_folder`), readable by this user only.

    Files are written to a temporary name and renamed, so a crash never leaves half a token.
    """

    def __init__(self, folder: Optional[str] = None) -> None:
        self.folder: str = folder or default_folder()

    def _usable(self) -> bool:
        """True when the folder exists and only this user can write to it; False when it does not exist.

        Raises:
            AuthError: another user owns it, or could write to it (POSIX; not checked on Windows,
                whose ACLs are not modes).
        """
        try:
            info = os.stat(self.folder)  # (follows a symlink: the folder it points to is the one used)
        except (FileNotFoundError, NotADirectoryError):
            return False
        if os.name == "nt":
            return True
        uid = os.geteuid()
        if info.st_uid not in (uid, 0):
            raise AuthError(f"the token store folder {self.folder} belongs to another user (uid {info.st_uid}; "
                            f"you are uid {uid}), who could plant tokens or a registration there. Use a folder "
                            f"of your own: FileTokenStore(folder), or $XDG_CONFIG_HOME")
        if info.st_mode & 0o022:
            raise AuthError(f"the token store folder {self.folder} is writable by other users (mode "
                            f"{stat.S_IMODE(info.st_mode):o}); another user could plant tokens or a registration "
                            f"there. Fix it with: chmod go-w {self.folder}")
        return True

    def _make_folder(self) -> None:
        """Create the folder and every missing folder above it, each 0700 whatever the umask."""
        missing = []
        path = os.path.abspath(self.folder)
        for _ in range(path.count(os.sep) + 1):  # one step up per path component: bounded
            if os.path.isdir(path):
                break
            missing.append(path)
            parent = os.path.dirname(path)
            if parent == path:
                break
            path = parent
        for path in reversed(missing):
            try:
                os.mkdir(path, 0o700)
            except FileExistsError:  # another process made it meanwhile: _usable() judges the last one
                continue
            os.chmod(path, 0o700)  # mkdir's mode passes through the umask (0o277 would leave 0o500): set it exactly

    def _path(self, key: Key) -> str:
        digest = hashlib.sha256("\0".join(key).encode()).hexdigest()[:32]
        return os.path.join(self.folder, f"{key[0]}-{digest}.json")

    def load(self, key: Key) -> Optional[Dict[str, Any]]:
        """The object saved under ``key``, or ``None`` (also for a file that is not ours or not JSON).

        Raises:
            AuthError: the folder is writable by another user (see :meth:`save`).
        """
        try:
            if not self._usable():
                return None
            with open(self._path(key), encoding="utf-8") as f:
                record = json.load(f)
        except (OSError, ValueError):
            return None
        if not isinstance(record, dict) or record.get("key") != list(key) or not isinstance(record.get("value"), dict):
            return None
        value: Dict[str, Any] = record["value"]
        return value

    def save(self, key: Key, value: Dict[str, Any]) -> None:
        """Write ``value`` under ``key``: mode 0600 in a 0700 folder (made, with any folder above it, if missing).

        Raises:
            AuthError: the folder is writable by group or others (the message says to ``chmod go-w`` it).
        """
        if not self._usable():
            self._make_folder()
            self._usable()
        path = self._path(key)
        temporary = f"{path}.{os.getpid()}.{threading.get_ident()}.tmp"
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                json.dump({"key": list(key), "value": value}, f)
            os.replace(temporary, path)
        except BaseException:
            try:
                os.unlink(temporary)
            except OSError:
                pass
            raise

    def delete(self, key: Key) -> None:
        """Remove ``key``'s file."""
        try:
            os.unlink(self._path(key))
        except FileNotFoundError:
            pass

    def items(self) -> Iterator[Tuple[Key, Dict[str, Any]]]:
        """Every ``(key, value)`` in the folder.

        Raises:
            AuthError: the folder is writable by another user (see :meth:`save`).
        """
        if not self._usable():
            return iter(())
        try:
            names = sorted(os.listdir(self.folder))
        except FileNotFoundError:
            return iter(())
        found = []
        for name in names:
            if not name.endswith(".json"):
                continue
            try:
                with open(os.path.join(self.folder, name), encoding="utf-8") as f:
                    record = json.load(f)
                found.append((tuple(record["key"]), record["value"]))
            except (OSError, ValueError, KeyError, TypeError):
                continue
        return iter(found)
