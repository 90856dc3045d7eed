"""Agent Skills from a server: the skills extension (``io.modelcontextprotocol/skills``,
SEP-2640), client side.

Listing a skill reads nothing but its entry (the extension forbids fetching a
skill's files ahead of need); loading it reads its ``SKILL.md`` and checks
it against the entry (size, SHA-256 digest, frontmatter), and each
supporting file is read, and checked, only when asked for::

    from minimcp.client.skills import list_skills, load_skill

    for skill in list_skills(client):
        print(skill.name, "-", skill.description)
    loaded = load_skill(client, skill)          # SkillVerificationError if it does not match
    print(loaded.text)
    checklist = loaded.read("references/checklist.md")
"""

from __future__ import annotations

import base64
from typing import TYPE_CHECKING, Any, Dict, List, Optional

from ..errors import ProtocolError
from ..errors import (
    SkillVerificationError as SkillVerificationError,  # (re-exported: raised by this module, importable where its feature lives)
)
from ..protocol.skills import EXTENSION, digest, frontmatter
from . import wire

if TYPE_CHECKING:  # pragma: no cover
    from .client import Client


class Skill:
    """One skill entry: ``uri`` (its ``SKILL.md``), ``frontmatter``, and ``resources``
    (``{uri: {"digest", "size"}}``, or None for a skill declared ``"dynamic"``)."""

    def __init__(self, entry: Dict[str, Any]) -> None:
        what = "a skill entry"
        self.entry: Dict[str, Any] = wire.obj(entry, what)
        self.uri: str = wire.field(entry, "uri", str, what)
        self.frontmatter: Dict[str, Any] = wire.field(entry, "frontmatter", dict, what, {})
        if self.uri is None:
            raise ProtocolError(f"{what} has no uri")
        listed = entry.get("resources")
        self.resources: Optional[Dict[str, Dict[str, Any]]] = None
        if listed != "dynamic":
            self.resources = {item["uri"]: item for item in wire.objects(entry, "resources", what)
                              if isinstance(item.get("uri"), str)}

    @property
    def name(self) -> str:
        """The skill's name (from its frontmatter)."""
        return str(self.frontmatter.get("name", ""))

    @property
    def description(self) -> str:
        """What the skill is for (from its frontmatter)."""
        return str(self.frontmatter.get("description", ""))

    @property
    def root(self) -> str:
        """The URI of the skill's folder: relative references resolve against it."""
        return self.uri.rsplit("/", 1)[0]

    def __repr__(self) -> str:
        return f"<Skill {self.name!r} {self.uri}>"


class LoadedSkill:
    """A skill whose ``SKILL.md`` was read and verified; its other files are read on demand."""

    def __init__(self, client: Client, skill: Skill, text: str) -> None:
        self.client: Client = client
        self.skill: Skill = skill
        self.text: str = text

    def read(self, path: str) -> bytes:
        """A supporting file (``references/x.md``, relative to the skill, or a full URI), verified.

        Raises:
            SkillVerificationError: it is not in the manifest, or its bytes do not match it.
        """
        uri = path if "://" in path else f"{self.skill.root}/{path.lstrip('/')}"
        return _read_verified(self.client, self.skill, uri)


def declared(client: Client) -> bool:
    """Did the server declare the skills extension (in ``server/discover``)?"""
    return EXTENSION in (client.server_capabilities.get("extensions") or {})


def list_skills(client: Client, timeout: Optional[float] = None) -> List[Skill]:
    """Every skill the server lists (``skills/list``, all pages); reads no skill file."""
    skills: List[Skill] = []
    cursor: Optional[str] = None
    for _ in range(1000):  # bounded: a server repeating its cursor cannot loop us forever
        result = client.request("skills/list", {"cursor": cursor} if cursor else {}, timeout=timeout)
        skills.extend(Skill(entry) for entry in wire.objects(result, "skills", "the server's skills/list"))
        cursor = wire.field(result, "nextCursor", str, "the server's skills/list")
        if not cursor:
            break
    return skills


def get_skill(client: Client, uri: str, timeout: Optional[float] = None) -> Skill:
    """The entry of the skill whose ``SKILL.md`` is ``uri`` (``skills/get``)."""
    result = client.request("skills/get", {"uri": uri}, timeout=timeout)
    return Skill(wire.field(result, "skill", dict, "the server's skills/get", {}))


def load_skill(client: Client, skill: Any, timeout: Optional[float] = None) -> LoadedSkill:
    """Read a skill's ``SKILL.md`` and verify it against the entry: size, digest, and each
    frontmatter field. ``skill`` is a :class:`Skill` or a ``SKILL.md`` URI.

    Raises:
        SkillVerificationError: what was served does not match the entry.
    """
    if isinstance(skill, str):
        skill = get_skill(client, skill, timeout)
    text = _read_verified(client, skill, skill.uri, timeout).decode("utf-8")
    try:
        served = frontmatter(text)
    except ValueError as exc:
        raise SkillVerificationError(f"{skill.uri}: {exc}") from None
    entry = skill.frontmatter
    changed = sorted(key for key in set(served) | set(entry) if served.get(key) != entry.get(key))
    if changed:
        raise SkillVerificationError(f"{skill.uri}: the frontmatter served differs from the entry in {changed}")
    return LoadedSkill(client, skill, text)


def _read_verified(client: Client, skill: Skill, uri: str, timeout: Optional[float] = None) -> bytes:
    """Read ``uri`` and check its bytes against the manifest (a dynamic skill: not checked)."""
    expected = skill.resources.get(uri) if skill.resources is not None else None
    if skill.resources is not None and expected is None:
        raise SkillVerificationError(f"{uri} is not in the manifest of {skill.uri}; refresh the entry")
    contents = client.read_resource(uri, timeout=timeout).contents
    if not contents:
        raise SkillVerificationError(f"{uri}: the server returned no contents")
    first = contents[0]
    data = first["text"].encode("utf-8") if "text" in first else base64.b64decode(first.get("blob") or "")
    if expected is not None:
        if len(data) != expected.get("size"):
            raise SkillVerificationError(f"{uri}: {len(data)} bytes served, the manifest says {expected.get('size')}")
        if digest(data) != expected.get("digest"):
            raise SkillVerificationError(f"{uri}: its digest does not match the manifest; do not use it")
    return data
