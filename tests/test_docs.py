"""The newcomer's documents say what the project does: README's commands, docs/api.md's steps."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from rest_framework.test import APIClient

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()
API_DOC = (ROOT / "docs" / "api.md").read_text()


def section(text: str, heading: str) -> str:
    start = text.index(heading)
    following = text.find("\n## ", start + len(heading))
    return text[start:] if following < 0 else text[start:following]


def test_the_readme_lists_as_many_commands_as_it_says_and_the_servers_address_option() -> None:
    block = section(README, "## Two commands").split("```sh", 1)[1].split("```", 1)[0]
    commands = [line for line in block.splitlines() if line.startswith("python3 dev.py")]
    assert len(commands) == 2, commands
    assert "--addr" in section(README, "## Two commands")


@pytest.mark.django_db
def test_step_two_of_the_api_walkthrough_works_as_written(
    alice: Any, bob: Any, settings: Any
) -> None:
    """The creator sits at the table it made; the opponent joins (the creator joining its own
    table again is a 409, as the step says)."""
    from tests.games.conftest import client_for

    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    step = section(API_DOC, "## 2. Create or join a table")
    created_with = json.loads(re.search(r"-d '(\{.*?\})'", step).group(1))  # type: ignore[union-attr]
    joins = [line for line in step.splitlines() if "/join/" in line and "curl" in line]
    assert joins and all('-H "$AUTH2"' in line for line in joins)  # the opponent's token

    creator: APIClient = client_for(alice)
    opponent: APIClient = client_for(bob)
    game = creator.post("/api/games/", created_with, format="json")
    assert game.status_code == 201
    listed = opponent.get("/api/games/", {"open_seats": "true"}).json()["results"]
    assert [g["id"] for g in listed] == [game.json()["id"]]
    assert opponent.post(f"/api/games/{game.json()['id']}/join/").status_code == 200
    again = creator.post(f"/api/games/{game.json()['id']}/join/")
    assert again.status_code == 409 and again.json()["code"] == "already_seated"
    assert "already_seated" in step


def test_every_error_code_the_api_raises_is_listed_in_the_docs() -> None:
    # A client switches on ``code``: the list in docs/api.md's errors section is the one place
    # to learn them (the schema's Error.code is a plain string).
    import importlib
    import pkgutil

    from rest_framework.exceptions import APIException

    for app in ("core", "games", "bots", "arena"):
        for module in pkgutil.walk_packages([str(ROOT / app)], prefix=f"{app}."):
            if ".migrations" not in module.name and ".management" not in module.name:
                importlib.import_module(module.name)

    def ours(cls: type) -> list[type]:
        found = []
        for sub in cls.__subclasses__():
            if sub.__module__.split(".")[0] in ("core", "games", "bots", "arena"):
                found.append(sub)
            found += ours(sub)
        return found

    listed = API_DOC[API_DOC.index("Codes: `invalid`"):
                     API_DOC.index("Every error under `/api/` has this body")]
    bases = {"error", "conflict"}  # the base classes' codes: never raised themselves
    missing = {cls.default_code for cls in ours(APIException)} - bases
    missing = {code for code in missing if f"`{code}`" not in listed}
    assert not missing, f"docs/api.md's error codes lack {sorted(missing)}"
