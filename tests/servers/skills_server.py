"""A stdio server that publishes the skills folder given on its command line.

Usage: python skills_server.py FOLDER
"""

import sys

from minimcp import Server
from minimcp.server.skills import publish_skills

server = Server("skills-test", version="0.0.1")
publish_skills(server, sys.argv[1])

if __name__ == "__main__":
    server.run()
