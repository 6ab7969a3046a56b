"""Tournaments, their matches and games, and the bots' persistent Elo ratings.

A tournament is a round robin cut into matches (one table of bots playing its games); one
Celery task per match (``arena.tasks.match_play``), which may go on with the next pending ones
(``arena.runner``). A match is claimed with a conditional
update, and each finished game is recorded in one transaction (``TournamentGame`` + progress
counters + Elo), so a redelivered or duplicated task never plays or records a game twice.
"""

from __future__ import annotations

from django.conf import settings
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.utils import timezone


class TournamentStatus(models.TextChoices):
    DRAFT = "draft", "Draft (taking entrants)"
    RUNNING = "running", "Running"
    FINISHED = "finished", "Finished"
    CANCELLED = "cancelled", "Cancelled"


class Tournament(models.Model):
    name = models.CharField(max_length=100)
    # Protected: a tournament's games, records and Elo history are other users' too (their
    # bots'). A user who owns one is deactivated, not deleted.
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="tournaments"
    )
    options = models.JSONField(help_text="Engine options (games.uno.Options.to_json()).")
    # arena.ratings.canonical_rule_set(options): the Elo ladder this tournament's games feed.
    rule_set = models.CharField(max_length=200, db_index=True)
    table_size = models.PositiveSmallIntegerField(
        default=2, validators=[MinValueValidator(2), MaxValueValidator(10)]
    )
    games_per_pairing = models.PositiveIntegerField(
        default=2, validators=[MinValueValidator(1), MaxValueValidator(1000)]
    )
    duplicate_deals = models.BooleanField(default=False)
    turn_timeout_ms = models.PositiveIntegerField(
        default=1000, validators=[MinValueValidator(1), MaxValueValidator(10000)]
    )
    max_strikes = models.PositiveSmallIntegerField(
        default=3, validators=[MinValueValidator(1), MaxValueValidator(100)]
    )
    seed = models.BigIntegerField()
    rated = models.BooleanField(default=True)
    status = models.CharField(
        max_length=16,
        choices=TournamentStatus.choices,
        default=TournamentStatus.DRAFT,
        db_index=True,
    )
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    # Progress, updated in the same transaction as each recorded game / finished match.
    matches_total = models.PositiveIntegerField(default=0)
    matches_done = models.PositiveIntegerField(default=0)
    games_total = models.PositiveIntegerField(default=0)
    games_done = models.PositiveIntegerField(default=0)
    # Standings rows (arena.ratings.standings); current while running, final once finalized.
    standings = models.JSONField(default=list, blank=True)
    # Bradley-Terry ratings with bootstrap intervals, computed once by the finalizer.
    bradley_terry = models.JSONField(default=dict, blank=True)
    finalized_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ("-created_at", "-id")

    def __str__(self) -> str:
        return f"{self.name} ({self.status})"

    @property
    def eta_seconds(self) -> float | None:
        """Time left, from the time spent per game so far; None before the first game."""
        if self.status != TournamentStatus.RUNNING or not self.started_at or not self.games_done:
            return None
        elapsed = (timezone.now() - self.started_at).total_seconds()
        left = max(self.games_total - self.games_done, 0)
        return round(elapsed / self.games_done * left, 1)

    @property
    def matches_dropped(self) -> int:
        """Matches a cancel left unfinished (never started, or stopped part-way); 0 unless
        cancelled. A match still running when the cancel came counts once it ends short of
        its games, not before: it may yet finish them (counted as dropped at once, the figure
        shrank as such matches were done)."""
        if self.status != TournamentStatus.CANCELLED:
            return 0
        return self.matches.filter(status=MatchStatus.CANCELLED).count()

    @property
    def games_dropped(self) -> int:
        """Games a cancel left unplayed; 0 unless cancelled. The games in play when it came
        still finish and count: until the tournament is finalized, those its running matches
        hold (``Match.live``) are not dropped (counted as dropped, the figure shrank as they
        were recorded)."""
        if self.status != TournamentStatus.CANCELLED:
            return 0
        in_play = 0
        if self.finalized_at is None:
            in_play = sum(len(live) for live in self.matches.filter(
                status=MatchStatus.RUNNING).values_list("live", flat=True))
        return max(self.games_total - self.games_done - in_play, 0)


class Entrant(models.Model):
    tournament = models.ForeignKey(Tournament, on_delete=models.CASCADE, related_name="entrants")
    # Protected: a started tournament's schedule names its entrants (a bot deleted from under
    # it left its matches unplayable); a draft's entrant is withdrawn first.
    bot = models.ForeignKey("bots.Bot", on_delete=models.PROTECT, related_name="entries")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ("id",)
        constraints = [
            models.UniqueConstraint(fields=("tournament", "bot"), name="entrant_once"),
        ]

    def __str__(self) -> str:
        return f"{self.bot_id} in {self.tournament_id}"


class MatchStatus(models.TextChoices):
    PENDING = "pending", "Pending"
    RUNNING = "running", "Running"
    DONE = "done", "Done"
    CANCELLED = "cancelled", "Cancelled"


class Match(models.Model):
    tournament = models.ForeignKey(Tournament, on_delete=models.CASCADE, related_name="matches")
    number = models.PositiveIntegerField()
    bots = models.JSONField(help_text="Bot ids at the table (the pairing).")
    status = models.CharField(
        max_length=16, choices=MatchStatus.choices, default=MatchStatus.PENDING, db_index=True
    )
    # Who plays it: a worker's random token, renewed (claimed_at) as games finish, so a claim
    # older than TOURNAMENT_CLAIM_STALE_SECONDS belongs to a dead worker and may be taken over.
    claimed_at = models.DateTimeField(null=True, blank=True)
    claim_token = models.CharField(max_length=64, blank=True, default="")
    games_total = models.PositiveIntegerField(default=0)
    games_done = models.PositiveIntegerField(default=0)
    finished_at = models.DateTimeField(null=True, blank=True)
    # The match's games, fixed at the start: [{"number", "seats", "deal", "seed"}...].
    plan = models.JSONField(default=list, blank=True)
    # Games started but not yet recorded: {number: game id}. A worker that takes the match
    # over from a dead one aborts these and plays them again from the same seed.
    live = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ("tournament", "number")
        verbose_name_plural = "matches"
        constraints = [
            models.UniqueConstraint(fields=("tournament", "number"), name="match_number_once"),
        ]

    def __str__(self) -> str:
        return f"Match {self.number} of tournament {self.tournament_id} ({self.status})"


class TournamentGame(models.Model):
    match = models.ForeignKey(Match, on_delete=models.CASCADE, related_name="games")
    tournament = models.ForeignKey(
        Tournament, on_delete=models.CASCADE, related_name="tournament_games"
    )
    game = models.OneToOneField(
        "games.Game", on_delete=models.CASCADE, related_name="tournament_game"
    )
    number = models.PositiveIntegerField(help_text="The game's number in the tournament.")
    deal = models.BigIntegerField(help_text="The deal's number in the tournament (0, 1, "
                                  "2...; the seatings of a duplicate deal share it), not a "
                                  "seed: the game's seed is derived from it and the "
                                  "tournament's seed.")
    seats = models.JSONField(help_text="Bot ids in seat order.")
    # winner seat, scores, points left per seat, finishing order, strikes, forfeited seats.
    result = models.JSONField(default=dict)
    finished_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ("id",)
        constraints = [
            models.UniqueConstraint(fields=("match", "number"), name="tournament_game_once"),
        ]

    def __str__(self) -> str:
        return f"Game {self.number} of tournament {self.tournament_id}"


class Rating(models.Model):
    bot = models.ForeignKey("bots.Bot", on_delete=models.CASCADE, related_name="ratings")
    rule_set = models.CharField(max_length=200)
    elo = models.FloatField()
    games = models.PositiveIntegerField(default=0)
    wins = models.PositiveIntegerField(default=0)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ("-elo", "id")
        constraints = [
            models.UniqueConstraint(fields=("bot", "rule_set"), name="rating_per_rule_set"),
        ]

    def __str__(self) -> str:
        return f"{self.bot_id} {self.rule_set}: {self.elo:.0f}"


class RatingChange(models.Model):
    rating = models.ForeignKey(Rating, on_delete=models.CASCADE, related_name="changes")
    game = models.ForeignKey("games.Game", on_delete=models.CASCADE, related_name="rating_changes")
    before = models.FloatField()
    after = models.FloatField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ("id",)
        constraints = [
            models.UniqueConstraint(fields=("rating", "game"), name="rating_change_once"),
        ]

    def __str__(self) -> str:
        return f"{self.rating_id}: {self.before:.0f} -> {self.after:.0f}"
