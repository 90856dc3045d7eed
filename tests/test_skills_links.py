"""Published skills serve nothing from outside their folder, whatever link leads there (issue 29).

A skills repository cloned from a third party may hold ``leak.md -> ~/.ssh/id_rsa`` (or a FIFO,
whose open would wait for ever: only regular files are served). Each
test publishes a folder on a real :class:`~minimcp.Server`, talks to it over
``connect("memory")``, and checks that the link pointing out is neither listed
(``skills/list``, ``resources/directory/read``) nor served (``resources/read``), while a link
that stays inside the published folder still is.
"""

import contextlib
import logging
import os
import threading

import pytest

import minimcp
from minimcp import RPCError, Server
from minimcp.client.skills import list_skills
from minimcp.server.skills import publish_skills

SECRET = "TOP SECRET: the key\n"
SKILL_MD = "---\nname: demo\ndescription: a skill with links in it\n---\n\n# Demo\n"
BASE = "skill://team/demo"

pytestmark = pytest.mark.skipif(not hasattr(os, "symlink") or os.name == "nt",
                                reason="needs symbolic links a user may create")


@pytest.fixture
def tree(tmp_path):
    """``published/team/demo`` (a skill with ``real.md`` and ``inside.md -> real.md``) and,
    next to ``published``, ``outside/secret.txt``."""
    skill = tmp_path / "published" / "team" / "demo"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text(SKILL_MD, encoding="utf-8")
    (skill / "real.md").write_text("the real file\n", encoding="utf-8")
    os.symlink("real.md", skill / "inside.md")  # stays inside: served
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret.txt").write_text(SECRET, encoding="utf-8")
    return tmp_path


@contextlib.contextmanager
def served(published):
    """Publish ``published`` on a fresh Server and connect to it; yield its skills (from
    ``skills/list``), what ``resources/directory/read`` lists of the demo skill's folder (None
    when it is not published), and ``read(name)`` of the demo skill's files."""
    server = Server("links")
    publish_skills(server, str(published))
    with minimcp.connect("memory", server=server) as client:
        skills = list_skills(client)
        listed = None
        if any(skill.uri == f"{BASE}/SKILL.md" for skill in skills):
            listed = [item["name"] for item in client.request("resources/directory/read", {"uri": BASE})["resources"]]

        def read(name):
            return client.read_resource(f"{BASE}/{name}").text

        yield skills, listed, read


def make_relative(skill, tree):
    os.symlink(os.path.join("..", "..", "..", "outside", "secret.txt"), skill / "leak.md")
    return ["leak.md"]


def make_absolute(skill, tree):
    os.symlink(str(tree / "outside" / "secret.txt"), skill / "leak.md")
    return ["leak.md"]


def make_chain(skill, tree):
    # leak.md -> hop.md (a name inside) -> the secret: only where the chain ends counts
    os.symlink(str(tree / "outside" / "secret.txt"), skill / "hop.md")
    os.symlink("hop.md", skill / "leak.md")
    return ["hop.md", "leak.md"]


def make_through_a_linked_folder(skill, tree):
    # refs -> ../../../outside (a linked folder: never walked), and leak.md -> refs/secret.txt,
    # a link whose text stays inside the skill and whose target is not
    os.symlink(os.path.join("..", "..", "..", "outside"), skill / "refs")
    os.symlink(os.path.join("refs", "secret.txt"), skill / "leak.md")
    return ["leak.md", "refs"]


@pytest.mark.parametrize("make", [make_relative, make_absolute, make_chain, make_through_a_linked_folder],
                         ids=["relative", "absolute", "chain", "through-linked-folder"])
def test_a_link_out_of_the_published_folder_is_neither_listed_nor_served(tree, make):
    skill = tree / "published" / "team" / "demo"
    links = make(skill, tree)
    assert (skill / "leak.md").read_text(encoding="utf-8") == SECRET  # the link works on disk
    with served(tree / "published") as (skills, listed, read):
        (entry,) = skills
        manifest = sorted(item["uri"].rsplit("/", 1)[-1] for item in entry.resources.values())
        assert manifest == ["SKILL.md", "inside.md", "real.md"]
        assert sorted(listed) == ["SKILL.md", "inside.md", "real.md"]
        for name in links:
            with pytest.raises(RPCError):
                read(name)
        assert read("inside.md") == "the real file\n"  # a link inside the folder is served


def test_a_skill_whose_skill_md_links_outside_is_not_published(tree):
    skill = tree / "published" / "team" / "demo"
    (tree / "outside" / "demo").mkdir()
    (tree / "outside" / "demo" / "SKILL.md").write_text(SKILL_MD, encoding="utf-8")
    os.remove(skill / "SKILL.md")
    os.symlink(str(tree / "outside" / "demo" / "SKILL.md"), skill / "SKILL.md")
    (tree / "published" / "team" / "other").mkdir()
    (tree / "published" / "team" / "other" / "SKILL.md").write_text(
        SKILL_MD.replace("name: demo", "name: other"), encoding="utf-8")
    with served(tree / "published") as (skills, listed, read):
        assert [skill.name for skill in skills] == ["other"] and listed is None
        with pytest.raises(RPCError):
            read("real.md")  # none of that skill's files either


def test_a_published_folder_reached_by_a_link_serves_its_own_files(tree):
    """The folder itself may be a link (``skills -> /srv/skills``): the comparison is of real
    paths, so its files are inside, and a link out of it is still refused."""
    os.symlink(str(tree / "published"), tree / "alias")
    make_absolute(tree / "published" / "team" / "demo", tree)
    with served(tree / "alias") as (skills, listed, read):
        assert sorted(listed) == ["SKILL.md", "inside.md", "real.md"]
        assert read("real.md") == "the real file\n"
        with pytest.raises(RPCError):
            read("leak.md")


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_a_fifo_in_a_skill_is_left_out_with_a_warning_not_waited_on(tree, caplog):
    """Opening a FIFO for reading waits for a writer: publishing must skip it (a warning says
    so) and go on, here with a FIFO as a file of the skill and one as the SKILL.md of another.
    Published on a thread, so the code that waited is seen to fail rather than hang the test."""
    skill = tree / "published" / "team" / "demo"
    os.mkfifo(skill / "pipe.md")
    (tree / "published" / "team" / "piped").mkdir()
    os.mkfifo(tree / "published" / "team" / "piped" / "SKILL.md")
    server = Server("fifo")
    published = []
    worker = threading.Thread(target=lambda: published.append(publish_skills(server, str(tree / "published"))),
                              name="test-publish")
    with caplog.at_level(logging.WARNING, logger="minimcp"):
        worker.start()
        worker.join(10)
        # Only for code that waits in open(): a writer's open ends that wait (each FIFO once, in turn).
        for fifo in (skill / "pipe.md", tree / "published" / "team" / "piped" / "SKILL.md"):
            if worker.is_alive():
                try:
                    os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
                except OSError:  # no reader waits on this one
                    continue
                worker.join(10)
    assert published, "publish_skills waited on a FIFO"
    warned = [record.getMessage() for record in caplog.records if "not a regular file" in record.getMessage()]
    assert len(warned) == 2 and any("pipe.md" in text for text in warned), warned
    with minimcp.connect("memory", server=server) as client:
        (entry,) = list_skills(client)
        assert sorted(item["uri"].rsplit("/", 1)[-1] for item in entry.resources.values()) == [
            "SKILL.md", "inside.md", "real.md"]
        with pytest.raises(RPCError):
            client.read_resource(f"{BASE}/pipe.md")
