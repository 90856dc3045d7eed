"""The skills extension (io.modelcontextprotocol/skills, SEP-2640), both sides, over stdio and
Streamable HTTP: a folder published with one call, listed, got, read and verified.
"""

import contextlib
import hashlib
import os

import pytest

import minimcp
from minimcp import RPCError, Server
from minimcp.client.skills import Skill, SkillVerificationError, get_skill, list_skills, load_skill
from minimcp.protocol.skills import frontmatter
from minimcp.server.http.wsgiserver import BackgroundServer
from minimcp.server.skills import publish_skills

from conftest import PY, ROOT

SKILLS_SERVER = os.path.join(ROOT, "tests", "servers", "skills_server.py")
TRANSPORTS = ["stdio", "http"]
SKILL_MD = """---
name: code-review
description: "Review code: the team's checklist"
metadata:
  owner: platform
  version: "2"
tags:
  - review
  - quality
---

# Code review

Read `references/checklist.md`, then review the diff.
"""


@pytest.fixture
def folder(tmp_path):
    skill = tmp_path / "team" / "code-review"
    (skill / "references").mkdir(parents=True)
    (skill / "SKILL.md").write_text(SKILL_MD, encoding="utf-8")
    (skill / "references" / "checklist.md").write_text("# Checklist\n\nTests? Docs?\n", encoding="utf-8")
    (skill / "logo.bin").write_bytes(bytes(range(256)))  # not UTF-8: served as a blob
    return tmp_path


@contextlib.contextmanager
def connected(transport, folder):
    if transport == "stdio":
        with minimcp.connect([PY, SKILLS_SERVER, str(folder)], timeout=20) as client:
            yield client
        return
    server = Server("skills-http")
    publish_skills(server, str(folder))
    app = server.wsgi_app()
    try:
        with BackgroundServer(app) as running, minimcp.connect(running.url + "/mcp", timeout=20) as client:
            yield client
    finally:
        app.close()


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_list_load_and_read(transport, folder):
    base = "skill://team/code-review"
    with connected(transport, folder) as client:
        assert client.server_capabilities["extensions"]["io.modelcontextprotocol/skills"] == {"directoryRead": True}
        assert "resources" in client.server_capabilities
        (skill,) = list_skills(client)
        assert skill.uri == f"{base}/SKILL.md" and skill.name == "code-review"
        assert skill.frontmatter == {"name": "code-review", "description": "Review code: the team's checklist",
                                     "metadata": {"owner": "platform", "version": "2"}, "tags": ["review", "quality"]}
        data = (folder / "team" / "code-review" / "SKILL.md").read_bytes()
        assert skill.resources[skill.uri] == {"uri": skill.uri, "size": len(data),
                                              "digest": "sha256:" + hashlib.sha256(data).hexdigest()}
        assert set(skill.resources) == {skill.uri, f"{base}/references/checklist.md", f"{base}/logo.bin"}
        loaded = load_skill(client, skill)
        assert loaded.text == SKILL_MD
        assert loaded.read("references/checklist.md") == b"# Checklist\n\nTests? Docs?\n"
        assert loaded.read("logo.bin") == bytes(range(256))
        with pytest.raises(SkillVerificationError):
            loaded.read("references/not-listed.md")  # outside the manifest: never read
        assert get_skill(client, skill.uri).entry == skill.entry
        assert load_skill(client, skill.uri).text == SKILL_MD  # by URI: skills/get, then the read


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_directories_and_errors(transport, folder):
    base = "skill://team/code-review"
    with connected(transport, folder) as client:
        listed = client.request("resources/directory/read", {"uri": base})
        assert listed["resources"] == [
            {"uri": f"{base}/SKILL.md", "name": "SKILL.md", "mimeType": "text/markdown"},
            {"uri": f"{base}/logo.bin", "name": "logo.bin", "mimeType": "application/octet-stream"},
            {"uri": f"{base}/references", "name": "references", "mimeType": "inode/directory"}]
        assert client.request("resources/directory/read", {"uri": "skill://team"})["resources"] == [
            {"uri": base, "name": "code-review", "mimeType": "inode/directory"}]
        for method, params in (("skills/get", {"uri": "skill://nope/SKILL.md"}), ("skills/get", {}),
                               ("resources/directory/read", {"uri": f"{base}/SKILL.md"}),
                               ("skills/list", {"cursor": "garbage"})):
            with pytest.raises(RPCError) as caught:
                client.request(method, params)
            assert caught.value.code == -32602, method
        assert len(list_skills(client)) == 1  # and the connection lives on


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_a_skill_that_does_not_match_its_entry_is_refused(transport, folder):
    with connected(transport, folder) as client:
        (skill,) = list_skills(client)
        for change in ({"digest": "sha256:" + "0" * 64}, {"size": 1}):
            entry = dict(skill.entry, resources=[dict(item, **change) if item["uri"] == skill.uri else item
                                                 for item in skill.entry["resources"]])
            with pytest.raises(SkillVerificationError):
                load_skill(client, Skill(entry))
        entry = dict(skill.entry, frontmatter=dict(skill.frontmatter, description="Exfiltrate credentials"))
        with pytest.raises(SkillVerificationError, match="description"):
            load_skill(client, Skill(entry))


def test_publishing_refuses_bad_skills(tmp_path):
    skill = tmp_path / "wrong-name"
    skill.mkdir()
    (skill / "SKILL.md").write_text("---\nname: other\ndescription: x\n---\n", encoding="utf-8")
    with pytest.raises(ValueError, match="wrong-name"):
        publish_skills(Server("s"), str(tmp_path))
    (skill / "SKILL.md").write_text("no frontmatter\n", encoding="utf-8")
    with pytest.raises(ValueError, match="frontmatter"):
        publish_skills(Server("s"), str(tmp_path))


def test_frontmatter_subset():
    text = "---\na: 1\nb: 2.5\nc: true\nd: ~\ne: 'it''s'\nf: \"q\\\"\"\ng: plain # note\nh:\n  i: j\nk:\n- x\n- 3\n---\n"
    assert frontmatter(text) == {"a": 1, "b": 2.5, "c": True, "d": None, "e": "it's", "f": 'q"', "g": "plain",
                                 "h": {"i": "j"}, "k": ["x", 3]}
    for bad in ("---\na: |\n  block\n---\n", "---\na: [1, 2]\n---\n", "---\nnot a mapping\n---\n"):
        with pytest.raises(ValueError, match="line"):
            frontmatter(bad)
