"""Staff add a tournament in the admin, checked as the API checks one
(``services.tournament_check``): a draft, owned by whoever added it, that bot owners then enter
their bots in. A bad field is shown on the form and nothing is created; anyone but staff is
refused."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from arena.models import Tournament, TournamentStatus

pytestmark = pytest.mark.django_db

ADD = "/admin/arena/tournament/add/"


@pytest.fixture(autouse=True)
def _fast(settings: Any, fresh_cache: None) -> None:
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture
def root(django_user_model: Any) -> Any:
    return django_user_model.objects.create_superuser("root", password="root-pw-1")


@pytest.fixture
def staff(root: Any) -> Client:
    client = Client()
    client.force_login(root)
    return client


def form(**changes: Any) -> dict[str, Any]:
    fields = {"name": "Sunday cup", "options": "{}", "table_size": "2",
              "games_per_pairing": "4", "turn_timeout_ms": "1000", "max_strikes": "3",
              "seed": "", "rated": "on"}
    return {**fields, **changes}


def test_the_tournament_list_offers_to_add_one(staff: Client) -> None:
    assert f'href="{ADD}"' in staff.get("/admin/arena/tournament/").content.decode()
    page = staff.get(ADD)
    assert page.status_code == 200
    for field in ("name", "options", "table_size", "games_per_pairing", "duplicate_deals",
                  "turn_timeout_ms", "max_strikes", "seed", "rated"):
        assert f'name="{field}"' in page.content.decode()


def test_staff_add_a_draft_tournament_that_they_own(staff: Client, root: Any) -> None:
    answer = staff.post(ADD, form(options='{"stacking": true}', seed="42"))

    tournament = Tournament.objects.get()
    assert answer.status_code == 302
    assert answer["Location"] == f"/admin/arena/tournament/{tournament.pk}/change/"
    assert tournament.owner == root
    assert tournament.status == TournamentStatus.DRAFT
    assert (tournament.name, tournament.seed, tournament.games_per_pairing) == (
        "Sunday cup", 42, 4)
    assert tournament.options["stacking"] is True
    assert tournament.rule_set != "official"
    page = staff.get(answer["Location"]).content.decode()
    assert f"/api/tournaments/{tournament.pk}/entrants/" in page  # where owners enter bots


def test_a_blank_seed_gets_a_random_one_and_empty_options_are_the_official_rules(
    staff: Client
) -> None:
    staff.post(ADD, form(options=""))

    tournament = Tournament.objects.get()
    assert tournament.rule_set == "official"
    assert 0 <= tournament.seed < 2**63


@pytest.mark.parametrize(("changes", "field", "message"), [
    ({"options": '{"stacking": "yes"}'}, "options", "must be a boolean"),
    ({"options": '{"players": 3}'}, "options", "must equal table_size (2)"),
    ({"options": "{not json"}, "options", "Enter a valid JSON"),
    ({"duplicate_deals": "on", "games_per_pairing": "3"}, "games_per_pairing",
     "multiple of the table size"),
    ({"table_size": "11"}, "table_size", "from 2 to 10"),
    ({"name": "   "}, "name", "This field is required."),
])
def test_a_bad_field_is_shown_on_the_form_and_nothing_is_created(
    staff: Client, changes: dict[str, str], field: str, message: str
) -> None:
    answer = staff.post(ADD, form(**changes))

    assert answer.status_code == 200
    errors = answer.context["adminform"].form.errors
    assert message in " ".join(errors.get(field, [])), errors
    assert not Tournament.objects.exists()


def test_a_signed_in_user_who_is_not_staff_cannot_add_one(alice: Any) -> None:
    client = Client()
    client.force_login(alice)

    assert client.get(ADD).status_code == 302  # to the admin's login
    assert client.post(ADD, form()).status_code == 302
    assert not Tournament.objects.exists()


def test_save_and_add_another_comes_back_to_an_empty_form(staff: Client) -> None:
    answer = staff.post(ADD, {**form(), "_addanother": "Save and add another"})

    assert answer.status_code == 302 and answer["Location"] == ADD
    assert Tournament.objects.count() == 1
