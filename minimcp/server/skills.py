"""Publish a folder of Agent Skills: the skills extension (``io.modelcontextprotocol/skills``,
SEP-2640), server side.

One call publishes every skill under a folder::

    from minimcp.server.skills import publish_skills

    publish_skills(server, "skills/")   # skills/code-review/SKILL.md, skills/code-review/references/...

Each folder that holds a ``SKILL.md`` is a skill, named by the folder (the
frontmatter's ``name`` must match it). Every file in it becomes a resource
``skill://<skill-path>/<file>`` served by ``resources/read``; the server
declares the extension in ``server/discover`` and answers ``skills/list``,
``skills/get`` (an entry: ``uri``, ``frontmatter``, and the manifest of
``{uri, digest, size}``) and ``resources/directory/read`` (a directory's
direct children). The files are read once, at publishing: the digests are
of the bytes served.

Nothing outside ``folder`` is served. Every file is resolved (``os.path.realpath``) and
kept only if its real path lies inside the folder's own real path: a symbolic link that
points out of it (``leak.md -> ../../outside/secret``, an absolute link, a chain of links
that ends outside) is left out, with a warning, as a link to a folder always was
(``os.walk`` does not follow those). A link that stays inside the folder is served: it
shows nothing the folder does not publish already. The check is made where the file is
read, and the resolved path is what is opened, so the bytes checked are the bytes served;
after that nothing is read again (a link changed later changes nothing served).

Only regular files are served: a FIFO (whose open would wait for a writer for ever), a socket
or a device in a skill's folder is left out with a warning.
"""

from __future__ import annotations

import errno
import mimetypes
import os
import stat
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Tuple

from ..errors import RPCError
from ..logs import get_logger
from ..protocol.jsonrpc import INVALID_PARAMS
from ..protocol.skills import DIRECTORY_MIME, EXTENSION, NAME_RULE, digest, frontmatter

#: The most files and bytes per skill the extension says a server should serve.
MAX_FILES, MAX_BYTES = 512, 16 * 1024 * 1024

if TYPE_CHECKING:
    from logging import Logger

log: Logger = get_logger(__name__)


class SkillSet:
    """The skills a server publishes (``server.skills``): entries by URI, and the directory tree."""

    EXTENSION = EXTENSION

    def __init__(self, directory_read: bool = True) -> None:
        self.directory_read = directory_read
        self.entries: Dict[str, Dict[str, Any]] = {}  # SKILL.md uri -> the skill entry
        self.children: Dict[str, Dict[str, bool]] = {}  # directory uri -> {child uri: is a directory}

    def settings(self) -> Dict[str, Any]:
        """The extension's settings in ``server/discover``."""
        return {"directoryRead": True} if self.directory_read else {}

    def add_file(self, uri: str) -> None:
        """Record ``uri`` and each of its parent directories (below the scheme) in the tree."""
        scheme, _, path = uri.partition("://")
        parts = path.split("/")
        for depth in range(1, len(parts)):
            parent = f"{scheme}://" + "/".join(parts[:depth])
            child = f"{scheme}://" + "/".join(parts[:depth + 1])
            self.children.setdefault(parent, {})[child] = depth + 1 < len(parts)


def publish_skills(server: Any, folder: str, *, scheme: str = "skill", directory_read: bool = True,
                   ttl_ms: Optional[int] = None) -> SkillSet:
    """Publish every skill under ``folder`` (each sub-folder with a ``SKILL.md``) on ``server``.

    Args:
        server: the :class:`~minimcp.Server`.
        folder: the folder to walk; a skill's path is its folder relative to this one.
        scheme: the URI scheme (the extension recommends ``skill``).
        directory_read: also answer ``resources/directory/read`` (declared as ``directoryRead``).
        ttl_ms: the cache hint of the skill's reads and listings (default: the server's).

    Returns:
        The :class:`SkillSet` (also ``server.skills``); a second call adds to it.

    Raises:
        ValueError: a ``SKILL.md`` without frontmatter, a name that does not match
            its folder or breaks the naming rules, or a skill past 512 files or 16 MiB.

    Only what lies inside ``folder`` is served: a file that is a symbolic link resolving
    outside it is left out with a warning (a skill whose ``SKILL.md`` is such a link, all of
    it), and linked folders are not walked. Links that stay inside are served. Only regular
    files are: a FIFO, socket or device is left out with a warning (a FIFO is never opened to wait).
    """
    skills: SkillSet = server.__dict__.get("skills") or server.__dict__.setdefault("skills", SkillSet(directory_read))
    published = os.path.realpath(folder)
    for root, dirs, files in os.walk(folder):  # (followlinks=False: a linked folder is never entered)
        dirs.sort()
        if "SKILL.md" in files:
            _publish_one(server, skills, folder, published, root, scheme, ttl_ms)
    return skills


def _read_inside(path: str, published: str) -> Optional[bytes]:
    """The bytes of ``path`` if its real path lies inside ``published`` (a real path) and is a
    regular file, else None (with a warning).

    A cloned skills repository may hold ``leak.md -> ~/.ssh/id_rsa``: whatever the links on
    the way (relative, absolute, chained), only where they end counts. The resolved path is
    what is opened, with ``O_NOFOLLOW`` where the OS has it. That guards the last component
    only: a file swapped for a link between the check and the open fails (ELOOP) instead of
    being followed, but a folder on the way swapped for a link would be followed. Publishing
    trusts the folder not to be rearranged while it is read (whoever can do that can change
    what it publishes anyway); what it refuses is a link already there that leads out.

    A FIFO would make the open wait for a writer for ever (a socket or a device is no file to
    serve either): the real path is checked to be a regular file before the open, and the open
    is non-blocking (``O_NONBLOCK``, no effect on a regular file) and checked again on what was
    opened, in case something else was put in its place meanwhile.
    """
    real = os.path.realpath(path)
    try:
        inside = os.path.commonpath([real, published]) == published
    except ValueError:  # another drive (Windows): not inside
        inside = False
    if not inside:
        log.warning("skills: not serving %s: it links to %s, outside the published folder %s",
                    path, real, published)
        return None
    if not stat.S_ISREG(os.stat(real).st_mode):  # (before the open: a socket's would fail, a FIFO's wait)
        log.warning("skills: not serving %s: it is not a regular file", path)
        return None
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    try:
        fd = os.open(real, flags)
    except OSError as exc:
        if exc.errno != errno.ELOOP:
            raise
        log.warning("skills: not serving %s: it became a link while being published", path)
        return None
    with open(fd, "rb") as file:
        if not stat.S_ISREG(os.fstat(fd).st_mode):  # replaced between the check and the open
            log.warning("skills: not serving %s: it is not a regular file", path)
            return None
        return file.read()


def _publish_one(server: Any, skills: SkillSet, folder: str, published: str, root: str, scheme: str,
                 ttl_ms: Optional[int]) -> None:
    skill_path = os.path.relpath(root, folder).replace(os.sep, "/")
    base = f"{scheme}://{skill_path}"
    text = _read_inside(os.path.join(root, "SKILL.md"), published)
    if text is None:  # its SKILL.md links outside: no skill
        return
    front = frontmatter(text.decode("utf-8"))
    name = skill_path.rsplit("/", 1)[-1]
    if front.get("name") != name or not NAME_RULE.match(name) or not isinstance(front.get("description"), str):
        raise ValueError(f"{root}/SKILL.md: its frontmatter needs name: {name} (the folder's name: lowercase "
                         f"letters, digits and single hyphens) and a description")
    manifest: List[Dict[str, Any]] = []
    for here, dirs, files in os.walk(root):
        dirs.sort()
        for filename in sorted(files):
            path = os.path.join(here, filename)
            data = _read_inside(path, published)
            if data is None:
                continue
            uri = base + "/" + os.path.relpath(path, root).replace(os.sep, "/")
            manifest.append({"uri": uri, "digest": digest(data), "size": len(data)})
            _serve_file(server, uri, data, front if uri == base + "/SKILL.md" else None, ttl_ms)
            skills.add_file(uri)
    if len(manifest) > MAX_FILES or sum(item["size"] for item in manifest) > MAX_BYTES:
        raise ValueError(f"{root}: a skill should have at most {MAX_FILES} files and {MAX_BYTES} bytes")
    manifest.sort(key=lambda item: item["uri"] != base + "/SKILL.md")  # SKILL.md first
    skills.entries[base + "/SKILL.md"] = {"uri": base + "/SKILL.md", "frontmatter": front, "resources": manifest}


def _serve_file(server: Any, uri: str, data: bytes, front: Optional[Dict[str, Any]], ttl_ms: Optional[int]) -> None:
    """Register one file as a resource: text when it is UTF-8, else a blob."""
    mime = "text/markdown" if uri.endswith(".md") else (mimetypes.guess_type(uri)[0] or "application/octet-stream")
    try:
        content: Any = data.decode("utf-8")
    except UnicodeDecodeError:
        content = data
    name = front["name"] if front else uri.rsplit("/", 1)[-1]
    server.add_resource(lambda: content, uri, name=name, description=front.get("description") if front else None,
                        mime_type=mime, size=len(data), ttl_ms=ttl_ms, cache_scope="public")


# -- the methods, as rows of server.methods.METHODS ---------------------------------------------------


def _skills(connection: Any) -> SkillSet:
    skills: Optional[SkillSet] = connection.server.__dict__.get("skills")
    if skills is None:
        raise RPCError(INVALID_PARAMS, "Invalid params: this server publishes no skills")
    return skills


def _cached(connection: Any, result: Dict[str, Any]) -> Dict[str, Any]:
    """Add the cache hints a skills result carries (extension: ``ttlMs`` and ``cacheScope``)."""
    result.setdefault("ttlMs", connection.server.cache_ttl_ms)
    result.setdefault("cacheScope", "public")
    return result


def _uri(params: Dict[str, Any]) -> str:
    uri = params.get("uri")
    if not isinstance(uri, str):
        raise RPCError(INVALID_PARAMS, 'Invalid params: "uri" (a string) is required')
    return uri


def _page(items: List[Any], params: Dict[str, Any], page_size: Optional[int]) -> Tuple[Any, ...]:
    """One page of ``items`` from ``params["cursor"]`` (an offset), and the next cursor or None."""
    cursor = params.get("cursor")
    start = int(cursor) if isinstance(cursor, str) and cursor.isdigit() else 0
    if cursor is not None and not (isinstance(cursor, str) and cursor.isdigit()):
        raise RPCError(INVALID_PARAMS, f"Invalid params: unknown cursor {cursor!r}; start again without one")
    end = len(items) if not page_size else start + page_size
    return items[start:end], (str(end) if end < len(items) else None)


def list_skills(connection: Any, params: Dict[str, Any], ctx: Any) -> Dict[str, Any]:
    """Answer ``skills/list``: every published skill's entry (a page of them, with ``page_size``)."""
    entries, cursor = _page(list(_skills(connection).entries.values()), params, connection.server.page_size)
    result: Dict[str, Any] = {"skills": entries}
    if cursor is not None:
        result["nextCursor"] = cursor
    return _cached(connection, result)


def get_skill(connection: Any, params: Dict[str, Any], ctx: Any) -> Dict[str, Any]:
    """Answer ``skills/get``: the entry of the skill whose ``SKILL.md`` is ``uri``; -32602 if none."""
    uri = _uri(params)
    entry = _skills(connection).entries.get(uri)
    if entry is None:
        raise RPCError(INVALID_PARAMS, f"Invalid params: no skill {uri!r} (skills/list shows the skills served)")
    return _cached(connection, {"skill": entry})


def read_directory(connection: Any, params: Dict[str, Any], ctx: Any) -> Dict[str, Any]:
    """Answer ``resources/directory/read``: a skill directory's direct children; -32602 for a URI
    that is not a directory of a published skill."""
    uri = _uri(params).rstrip("/")
    skills = _skills(connection)
    children = skills.children.get(uri) if skills.directory_read else None
    if children is None:
        raise RPCError(INVALID_PARAMS, f"Invalid params: {uri!r} is not a directory of the skills served")
    listed = []
    for child, is_directory in sorted(children.items()):
        item = {"uri": child, "name": child.rsplit("/", 1)[-1]}
        if is_directory:
            item["mimeType"] = DIRECTORY_MIME
        else:
            found = connection.server.find_resource(child)
            if found is not None and found[0].definition.get("mimeType"):
                item["mimeType"] = found[0].definition["mimeType"]
        listed.append(item)
    page, cursor = _page(listed, params, connection.server.page_size)
    result: Dict[str, Any] = {"resources": page}
    if cursor is not None:
        result["nextCursor"] = cursor
    return result
