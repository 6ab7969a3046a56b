"""Who may do what to a tournament, and what a tournament refuses (the services' rules)."""

from __future__ import annotations

from typing import Any

import pytest
from rest_framework.exceptions import ValidationError

from arena import services
from arena.models import Match, MatchStatus, Tournament, TournamentStatus
from bots import services as bot_services
from bots.models import Bot

# A cache of each test's own: running tournaments' tables are cached by id (the same ids in
# every xdist worker's database, one Redis).
pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("fresh_cache")]


def _bot(owner: Any, name: str, *, verified: bool = True) -> Bot:
    bot, _ = bot_services.bot_create(owner=owner, name=name, url="http://127.0.0.1:9/")
    Bot.objects.filter(pk=bot.pk).update(verified=verified)
    return Bot.objects.get(pk=bot.pk)


def _cup(owner: Any, **kwargs: Any) -> Tournament:
    return services.tournament_create(owner=owner, name="Cup", options={}, **kwargs)


def test_it_keeps_the_rules_canonically_and_the_seats_in_the_options(alice: Any) -> None:
    cup = _cup(alice, table_size=3, seed=7)
    assert cup.rule_set == "official" and cup.options["players"] == 3
    stacked = services.tournament_create(owner=alice, name="S", options={"stacking": True})
    assert stacked.rule_set == "stacking"


@pytest.mark.parametrize("bad", [
    {"table_size": 1}, {"table_size": 11}, {"games_per_pairing": 0},
    {"turn_timeout_ms": 10_001}, {"max_strikes": 0}, {"seed": -1},
    {"duplicate_deals": True, "games_per_pairing": 3},
])
def test_it_rejects_parameters_out_of_range(alice: Any, bad: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        _cup(alice, **bad)
    assert not Tournament.objects.exists()


def test_owners_enter_only_their_own_verified_enabled_bots(alice: Any, bob: Any) -> None:
    cup = _cup(alice)
    bobs = _bot(bob, "bobs")
    with pytest.raises(services.NotBotOwner):
        services.entrant_enter(tournament_id=cup.pk, bot_id=bobs.pk, user=alice)
    unverified = _bot(bob, "fresh", verified=False)
    with pytest.raises(services.BotNotEligible):
        services.entrant_enter(tournament_id=cup.pk, bot_id=unverified.pk, user=bob)
    services.entrant_enter(tournament_id=cup.pk, bot_id=bobs.pk, user=bob)
    services.entrant_enter(tournament_id=cup.pk, bot_id=bobs.pk, user=bob)  # idempotent
    assert cup.entrants.count() == 1


def test_only_the_owner_or_staff_starts_and_cancels(alice: Any, bob: Any, charlie: Any) -> None:
    cup = _cup(alice)
    for i, owner in enumerate((alice, bob)):
        services.entrant_enter(tournament_id=cup.pk, bot_id=_bot(owner, f"b{i}").pk, user=owner)
    with pytest.raises(services.NotTournamentOwner):
        services.tournament_start(tournament_id=cup.pk, user=bob, dispatch=False)
    with pytest.raises(services.NotTournamentOwner):
        services.tournament_cancel(tournament_id=cup.pk, user=charlie)
    charlie.is_staff = True
    charlie.save()
    started = services.tournament_start(tournament_id=cup.pk, user=charlie, dispatch=False)
    assert started.status == TournamentStatus.RUNNING
    assert (started.matches_total, started.games_total) == (1, 2)
    with pytest.raises(services.TournamentError):
        services.tournament_start(tournament_id=cup.pk, user=alice, dispatch=False)
    with pytest.raises(services.TournamentError):
        services.entrant_withdraw(tournament_id=cup.pk, bot_id=started.entrants.first().bot_id,
                                  user=alice)
    services.tournament_cancel(tournament_id=cup.pk, user=alice)
    with pytest.raises(services.TournamentError):
        services.tournament_cancel(tournament_id=cup.pk, user=alice)


def test_it_refuses_to_start_with_too_few_entrants(alice: Any) -> None:
    cup = _cup(alice, table_size=3)
    for i in range(2):
        services.entrant_enter(tournament_id=cup.pk, bot_id=_bot(alice, f"a{i}").pk, user=alice)
    with pytest.raises(services.TournamentError):
        services.tournament_start(tournament_id=cup.pk, user=alice, dispatch=False)
    cup.refresh_from_db()
    assert cup.status == TournamentStatus.DRAFT and not Match.objects.exists()


def test_the_schedule_is_cut_into_one_match_per_table(alice: Any) -> None:
    cup = _cup(alice, table_size=2, games_per_pairing=4, duplicate_deals=True)
    bots = [_bot(alice, f"t{i}") for i in range(4)]
    for bot in bots:
        services.entrant_enter(tournament_id=cup.pk, bot_id=bot.pk, user=alice)
    started = services.tournament_start(tournament_id=cup.pk, user=alice, dispatch=False)
    matches = list(started.matches.all())
    assert len(matches) == started.matches_total == 6 and started.games_total == 24
    numbers = sorted(i["number"] for m in matches for i in m.plan)
    assert numbers == list(range(24))
    for match in matches:
        assert all(sorted(i["seats"]) == match.bots for i in match.plan)
        deals: dict[int, set[int]] = {}
        for item in match.plan:  # each deal played once in each seating, same seed
            deals.setdefault(item["seed"], set()).add(item["seats"][0])
        assert all(first == set(match.bots) for first in deals.values())


def test_a_start_past_the_games_cap_is_refused_before_the_schedule_is_built(
    alice: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """20 bots at tables of 10, 1,000 games a table: 1,000,000 games. The refusal took 30 s
    and 300 MB (the whole schedule built, the tournament's row locked) to say so."""
    cup = _cup(alice, table_size=10, games_per_pairing=1000)
    for i in range(20):
        services.entrant_enter(tournament_id=cup.pk, bot_id=_bot(alice, f"b{i}").pk, user=alice)

    def never(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("the schedule was built")

    monkeypatch.setattr(services.schedule, "round_robin", never)
    with pytest.raises(services.TournamentError, match="schedules 1000000 games; the most is"):
        services.tournament_start(tournament_id=cup.pk, user=alice)
    cup.refresh_from_db()
    assert cup.status == TournamentStatus.DRAFT and not Match.objects.filter(tournament=cup)


def test_a_match_running_at_the_cancel_is_not_counted_dropped_until_it_ends_short(
    alice: Any, bob: Any
) -> None:
    """Before: counted dropped at once, and when it then finished its games the figure shrank
    (the cancel's answer said 5 dropped, the final state 3)."""
    from tests.arena.admin_fixtures import build_world

    world = build_world(alice, bob)  # matches: one done, one running (2 games live), one pending
    running = Match.objects.get(tournament=world.running, status=MatchStatus.RUNNING)
    Match.objects.filter(pk=running.pk).update(live={"3": 0, "4": 0})
    cancelled = services.tournament_cancel(tournament_id=world.running.pk, user=alice)
    assert (cancelled.matches_dropped, cancelled.games_dropped) == (1, 2)
    # The running match plays its two games to the end: nothing more was dropped.
    Match.objects.filter(pk=running.pk).update(status=MatchStatus.DONE, games_done=2, live={})
    Tournament.objects.filter(pk=cancelled.pk).update(games_done=4, matches_done=2)
    cancelled.refresh_from_db()
    assert (cancelled.matches_dropped, cancelled.games_dropped) == (1, 2)


def test_entrants_level_in_the_standings_keep_the_order_they_entered_in(alice: Any) -> None:
    """ratings.md says so; they were in bot id order."""
    from arena import records

    cup = _cup(alice)
    bots = [_bot(alice, name) for name in ("first", "second", "third")]
    for bot in reversed(bots):
        services.entrant_enter(tournament_id=cup.pk, bot_id=bot.pk, user=alice)
    rows = records.standings_rows(cup, [])
    assert [row["bot"] for row in rows] == [bot.pk for bot in reversed(bots)]
