"""Tournament, leaderboard and rating bodies of the API. Every signed-in user sees the same
thing here: nothing about a tournament is private, except its seed (the deals) until it ends,
which the API never shows (a finished game's replay has each game's own seed)."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers
from rest_framework.fields import empty

from arena.models import Tournament, TournamentStatus
from arena.ratings import OFFICIAL
from arena.ratings.rule_sets import rule_set_named
from core.strict import (
    QueryIntegerField,
    QuerySerializer,
    StrictCharField,
    StrictInput,
    StrictIntegerField,
)
from games.schema import INT64_MAX
from games.serializers import OptionsField, OptionsOutField, StrictBooleanField
from games.uno.errors import UnoError


# --- tournaments -------------------------------------------------------------------------------
class TournamentCreateInput(StrictInput):
    name = StrictCharField(max_length=100, help_text="Shown in lists and the admin.")
    options = OptionsField(required=False, default=dict, help_text="Engine rule options, "
                           "as for a game (checked by the rules engine). The number of "
                           "players is `table_size`: leave `players` out, or give the same.")
    table_size = StrictIntegerField(min_value=2, max_value=10, default=2,
                                    help_text="Bots per game (2-10).")
    games_per_pairing = StrictIntegerField(
        min_value=1, max_value=1000, default=2,
        help_text="Games each table of bots plays; seats rotate so each bot sits in each "
        "position equally often.",
    )
    duplicate_deals = StrictBooleanField(
        default=False, help_text="Replay each deal with the seats permuted, so the luck of "
        "the cards cancels out (docs/ratings.md). A deal's seatings are played one after "
        "another; a bot that remembers a deal could recognise it in the next seating, so use "
        "it for bots you trust to play each game on its own."
    )
    turn_timeout_ms = StrictIntegerField(min_value=1, max_value=10000, default=1000,
                                         help_text="Each bot call's time limit.")
    max_strikes = StrictIntegerField(min_value=1, max_value=100, default=3,
                                     help_text="Strikes after which a seat is forfeited.")
    rated = StrictBooleanField(default=True, help_text="Whether its games move the bots' Elo.")

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        from arena import services

        # The engine checks the options, so a bad one is a 400 naming the field.
        services.tournament_options(options=dict(attrs.get("options") or {}),
                                    table_size=attrs["table_size"])
        return attrs


class TournamentUpdateInput(TournamentCreateInput):
    """Any of a draft's settings; those left out are kept. Checked together with the kept
    ones (the service's 400 names what disagrees)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for field in self.fields.values():  # left out: kept, not defaulted
            field.required, field.default = False, empty

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        return attrs


class TournamentFilterInput(QuerySerializer):
    status = serializers.ChoiceField(choices=TournamentStatus.choices, required=False)
    mine = serializers.ChoiceField(choices=["true", "false", "1", "0"], required=False,
                                   help_text="Only tournaments you own or have a bot in.")
    page = serializers.CharField(required=False)
    page_size = serializers.CharField(required=False)


class EntrantInput(StrictInput):
    bot = StrictIntegerField(min_value=1, help_text="One of your verified, enabled bots.")


class EntrantOut(serializers.Serializer):
    bot = serializers.IntegerField()
    name = serializers.CharField()
    owner = serializers.CharField()
    entered_at = serializers.DateTimeField()


class ProgressOut(serializers.Serializer):
    matches_done = serializers.IntegerField()
    matches_total = serializers.IntegerField()
    games_done = serializers.IntegerField()
    games_total = serializers.IntegerField()
    matches_dropped = serializers.IntegerField(help_text="Matches a cancel left unfinished "
                                               "(never started, or stopped part-way): never "
                                               "to be played. 0 unless `cancelled`. A match "
                                               "running at the cancel counts once it ends "
                                               "short of its games.")
    games_dropped = serializers.IntegerField(help_text="Games a cancel left unplayed. 0 "
                                             "unless `cancelled`.")
    eta_seconds = serializers.FloatField(
        allow_null=True, help_text="Estimated time left, from the time per game so far "
        "(null before the first game and once it is over)."
    )


class TournamentOut(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()
    owner = serializers.CharField()
    status = serializers.ChoiceField(choices=TournamentStatus.choices)
    options = OptionsOutField()
    rule_set = serializers.CharField(help_text="The Elo ladder its games feed.")
    table_size = serializers.IntegerField()
    games_per_pairing = serializers.IntegerField()
    duplicate_deals = serializers.BooleanField()
    turn_timeout_ms = serializers.IntegerField()
    max_strikes = serializers.IntegerField()
    rated = serializers.BooleanField()
    entrants = EntrantOut(many=True)
    progress = ProgressOut()
    created_at = serializers.DateTimeField()
    started_at = serializers.DateTimeField(allow_null=True)
    finished_at = serializers.DateTimeField(allow_null=True)


def progress_data(tournament: Tournament) -> dict[str, Any]:
    return {
        "matches_done": tournament.matches_done,
        "matches_total": tournament.matches_total,
        "games_done": tournament.games_done,
        "games_total": tournament.games_total,
        "matches_dropped": tournament.matches_dropped,
        "games_dropped": tournament.games_dropped,
        "eta_seconds": tournament.eta_seconds,
    }


def tournament_data(tournament: Tournament) -> dict[str, Any]:
    """``TournamentOut``'s fields (entrants with their bots and owners prefetched)."""
    return {
        "id": tournament.pk,
        "name": tournament.name,
        "owner": tournament.owner.get_username(),
        "status": tournament.status,
        "options": tournament.options,
        "rule_set": tournament.rule_set,
        "table_size": tournament.table_size,
        "games_per_pairing": tournament.games_per_pairing,
        "duplicate_deals": tournament.duplicate_deals,
        "turn_timeout_ms": tournament.turn_timeout_ms,
        "max_strikes": tournament.max_strikes,
        "rated": tournament.rated,
        "entrants": [
            {"bot": e.bot_id, "name": e.bot.name, "owner": e.bot.owner.get_username(),
             "entered_at": e.created_at}
            for e in tournament.entrants.all()
        ],
        "progress": progress_data(tournament),
        "created_at": tournament.created_at,
        "started_at": tournament.started_at,
        "finished_at": tournament.finished_at,
    }


# --- standings ---------------------------------------------------------------------------------
class StandingOut(serializers.Serializer):
    rank = serializers.IntegerField(help_text="The place in the tournament: by win rate (only "
                                    "first place at a table is a win), then wins, points, "
                                    "fewer points left. The Bradley-Terry `rating` uses the "
                                    "whole finishing order, so at 3+ seats it may order the "
                                    "bots otherwise (docs/ratings.md).")
    bot = serializers.IntegerField()
    name = serializers.CharField()
    games = serializers.IntegerField()
    wins = serializers.IntegerField()
    win_rate = serializers.FloatField(allow_null=True, help_text="Wins / games (null for a bot "
                                      "with no games yet, listed last).")
    points = serializers.IntegerField(help_text="Points scored (the winners' hand scores).")
    avg_points_left = serializers.FloatField(allow_null=True, help_text="Mean points left in "
                                             "hand per game (null with no games).")
    strikes = serializers.IntegerField()
    forfeits = serializers.IntegerField()
    rating = serializers.FloatField(allow_null=True, help_text="Bradley-Terry rating (Elo "
                                    "scale, mean 1500 over the bots with games), once the "
                                    "tournament is finalized; null for a bot with no games.")
    low = serializers.FloatField(allow_null=True, help_text="95% bootstrap interval, low end "
                                 "(null until finalized, and where the games give no interval: "
                                 "fewer than two distinct resampling units, or no games).")
    high = serializers.FloatField(allow_null=True, help_text="95% bootstrap interval, "
                                  "high end (null when `low` is).")


class StandingsOut(serializers.Serializer):
    tournament = serializers.IntegerField()
    status = serializers.ChoiceField(choices=TournamentStatus.choices)
    final = serializers.BooleanField(help_text="True once the finalizer computed the table "
                                     "and the Bradley-Terry ratings.")
    progress = ProgressOut()
    standings = StandingOut(many=True)


# --- leaderboard and ratings -------------------------------------------------------------------
class RuleSetField(serializers.CharField):
    """A ladder's name, canonical or not (``stacking,single_hand`` is ``single_hand,stacking``):
    given back canonical, or a 400 for a name that spells no rules (not an empty ladder)."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(required=False, default=OFFICIAL, max_length=200, **kwargs)

    def to_internal_value(self, data: Any) -> str:
        name = super().to_internal_value(data)
        try:
            return rule_set_named(name)
        except (ValueError, UnoError) as exc:
            raise serializers.ValidationError(
                f"No such rule set: {exc}. A ladder is `official`, or rules as a tournament's "
                "`rule_set` names them, like `single_hand,stacking`."
            ) from None


class LeaderboardQuery(QuerySerializer):
    rule_set = RuleSetField(help_text="The ladder: `official` or a rule set as a tournament's "
                            "`rule_set` names it (in any order).")
    owner = serializers.CharField(required=False, max_length=150,
                                  help_text="Only bots of this user.")
    verified = serializers.ChoiceField(choices=["true", "false", "1", "0"], required=False)
    active = serializers.ChoiceField(choices=["true", "false", "1", "0"], required=False,
                                     help_text="Only enabled bots (true) or disabled (false).")
    search = serializers.CharField(required=False, max_length=64,
                                   help_text="Part of the bot's name.")
    page = serializers.CharField(required=False)
    page_size = serializers.CharField(required=False)


class LeaderboardRowOut(serializers.Serializer):
    rank = serializers.IntegerField(help_text="The bot's place on the whole ladder, whatever "
                                    "the filters show of it (as the admin's leaderboard).")
    bot = serializers.IntegerField()
    name = serializers.CharField()
    owner = serializers.CharField()
    verified = serializers.BooleanField()
    enabled = serializers.BooleanField()
    rule_set = serializers.CharField()
    elo = serializers.FloatField()
    bradley_terry = serializers.FloatField(
        allow_null=True, help_text="The bot's Bradley-Terry rating (Elo scale, mean 1500) in "
        "its latest finished rated tournament of this rule set (null if none; unrated and "
        "cancelled tournaments never count), beside the Elo that all its rated games built.")
    low = serializers.FloatField(allow_null=True, help_text="95% interval of that "
                                 "Bradley-Terry rating, low end (null if none, or where that "
                                 "tournament's games gave no interval).")
    high = serializers.FloatField(allow_null=True, help_text="The interval's high end (null "
                                  "when `low` is).")
    bradley_terry_tournament = serializers.IntegerField(
        allow_null=True, help_text="The id of the tournament the Bradley-Terry figures are "
        "from (null if none).")
    games = serializers.IntegerField()
    wins = serializers.IntegerField()
    win_rate = serializers.FloatField()
    p50_ms = serializers.FloatField(allow_null=True, help_text="Median latency of its recent "
                                    "turn calls.")
    p99_ms = serializers.FloatField(allow_null=True)
    strikes = serializers.IntegerField(help_text="Strikes ever.")


HISTORY_LIMIT_MAX = 10_000


class RatingQuery(QuerySerializer):
    rule_set = RuleSetField(help_text="The ladder: `official` or a rule set as a tournament's "
                            "`rule_set` names it (in any order).")
    limit = QueryIntegerField(min_value=1, max_value=HISTORY_LIMIT_MAX, required=False,
                              help_text="Only the newest this many points (still oldest "
                              "first); without it, the whole history.")
    before = QueryIntegerField(min_value=1, max_value=INT64_MAX, required=False,
                               help_text="A game in the history: only the points older than "
                               "its own (with `limit`, to page back through the history).")


class RatingPointOut(serializers.Serializer):
    game = serializers.IntegerField()
    tournament = serializers.IntegerField(allow_null=True, help_text="The tournament the game "
                                          "was played in (null only if that record is gone).")
    before = serializers.FloatField()
    after = serializers.FloatField()
    at = serializers.DateTimeField()


class RatingHistoryOut(serializers.Serializer):
    bot = serializers.IntegerField()
    rule_set = serializers.CharField()
    elo = serializers.FloatField(allow_null=True, help_text="Current Elo (null: never rated).")
    games = serializers.IntegerField()
    ladders = serializers.ListField(
        child=serializers.CharField(), help_text="Every ladder (rule set) the bot has an Elo "
        "on, `official` first: ask for one with `rule_set`. Empty if it has played no rated "
        "game.")
    history = RatingPointOut(many=True, help_text="One point per rated game, oldest first "
                             "(with `limit`: the newest that many).")
    more = serializers.BooleanField(help_text="Whether older points were left out (by "
                                    "`limit`): false when `history` reaches back to the first "
                                    "game. To page back, ask again with `before` set to the "
                                    "first point's `game`.")


class TournamentGameOut(serializers.Serializer):
    number = serializers.IntegerField(help_text="The game's number in the tournament's "
                                      "schedule; the list is in this order.")
    game = serializers.IntegerField(help_text="The game's id: `GET /api/games/{id}/replay/` "
                                    "replays it (a tournament's games are open to every user).")
    match = serializers.IntegerField(help_text="The match (one table of bots) it belongs to.")
    bots = serializers.ListField(child=serializers.IntegerField(),
                                 help_text="Bot ids in seat order.")
    winner = serializers.IntegerField(allow_null=True, help_text="The winning seat.")
    scores = serializers.ListField(child=serializers.IntegerField(), help_text="Per seat.")
    points_left = serializers.ListField(child=serializers.IntegerField(),
                                        help_text="The points left in each seat's hand.")
    strikes = serializers.ListField(child=serializers.IntegerField(), help_text="Per seat.")
    forfeited = serializers.ListField(child=serializers.IntegerField(),
                                      help_text="Seats that forfeited.")
    end_reason = serializers.CharField()
    rated = serializers.BooleanField(help_text=(
        "False for a game nobody won by playing: aborted by staff, or forfeited by every seat "
        "(a table of disabled bots). It counts in the standings but moves no rating."))
    finished_at = serializers.DateTimeField()


def tournament_game_data(played: Any) -> dict[str, Any]:
    result = played.result
    return {
        "number": played.number, "game": played.game_id, "match": played.match_id,
        "bots": played.seats, "winner": result.get("winner"), "scores": result.get("scores", []),
        "points_left": result.get("points_left", []), "strikes": result.get("strikes", []),
        "forfeited": result.get("forfeited", []), "end_reason": result.get("end_reason", ""),
        "rated": result.get("rated", True), "finished_at": played.finished_at,
    }
