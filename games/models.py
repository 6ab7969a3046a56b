"""Tables, seats, the move log, the public event log and idempotency records.

A running game's hidden information (engine ``state``, ``seed``) lives only on ``Game`` and
never leaves the server before the game ends: serializers name the public fields explicitly.
"""

from __future__ import annotations

from django.conf import settings
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models

DEFAULT_TURN_SECONDS = 60
DEFAULT_MAX_STRIKES = 3


class GameStatus(models.TextChoices):
    OPEN = "open", "Open (waiting for players)"
    RUNNING = "running", "Running"
    FINISHED = "finished", "Finished"
    ABORTED = "aborted", "Aborted"


class Game(models.Model):
    status = models.CharField(
        max_length=16, choices=GameStatus.choices, default=GameStatus.OPEN, db_index=True
    )
    # Why the game ended: "match" (engine finished it), "forfeit" (too few seats left),
    # "abandoned" (everyone left before the start), "staff" (aborted from the admin),
    # "interrupted" (a tournament's game cut off by its worker's end, dealt again).
    end_reason = models.CharField(max_length=16, blank=True, default="")
    options = models.JSONField(help_text="Engine options (games.uno.Options.to_json()).")
    seed = models.BigIntegerField(help_text="Secret until the game is over.")
    state = models.JSONField(null=True, blank=True, help_text="Engine state; secret.")
    # The engine state's "rng" entry, kept apart: it changes only when cards are shuffled, and
    # is most of the state's size, so most moves need not rewrite it (engine_state.load_state).
    rng = models.JSONField(null=True, blank=True, help_text="Engine RNG state; secret.")
    # One number per event (join, start, move, strike...): clients send the version they saw
    # with a move, and the server refuses a stale one.
    version = models.PositiveIntegerField(default=0)
    move_count = models.PositiveIntegerField(default=0)
    turn_seconds = models.PositiveIntegerField(
        default=DEFAULT_TURN_SECONDS, validators=[MinValueValidator(1), MaxValueValidator(86400)]
    )
    max_strikes = models.PositiveSmallIntegerField(
        default=DEFAULT_MAX_STRIKES, validators=[MinValueValidator(1), MaxValueValidator(100)]
    )
    # Not indexed: it changes with nearly every move, and an index on it would make every
    # move's update rewrite the row's index entries.
    turn_deadline = models.DateTimeField(null=True, blank=True)
    # Public facts copied out of the engine state so lists never decode it.
    awaiting = models.SmallIntegerField(null=True, blank=True)
    hand_number = models.PositiveIntegerField(default=0)
    scores = models.JSONField(default=list, blank=True)
    winner = models.SmallIntegerField(null=True, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="games_created"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    # Not a column: how many seats are forfeited, when the read that loaded the game counted
    # them (``games.rows.seat_with_game``); None when unknown.
    forfeited_seats: int | None = None

    class Meta:
        ordering = ("-created_at", "-id")
        # Staff who may end a table from the admin (superusers may anyway).
        permissions = [("abort_game", "Can abort a game")]
        # The game list's order (``selectors.game_list``): a page is read off the index's
        # head instead of sorting every game ever played (2.4 s at 160,000 games without it).
        indexes = [models.Index(fields=("-created_at", "-id"), name="game_newest")]

    def __str__(self) -> str:
        return f"Game {self.pk} ({self.status})"

    @property
    def is_over(self) -> bool:
        return self.status in (GameStatus.FINISHED, GameStatus.ABORTED)


class Seat(models.Model):
    """One chair at a table, driven by an API ``user`` or by a ``bot`` the server calls
    (exactly one of them set once taken). Games know nothing of bots beyond this reference:
    the bots app drives its seats through ``games.hooks``."""

    # No index of its own: ``seat_unique_index`` begins with the game (a second one cost a
    # write per row and, at a year of a ladder, tens of megabytes).
    game = models.ForeignKey(Game, on_delete=models.CASCADE, related_name="seats",
                             db_index=False)
    index = models.PositiveSmallIntegerField()
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="seats",
    )
    # A lazy reference: the bots app depends on games, never the other way round.
    bot = models.ForeignKey(
        "bots.Bot",
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="seats",
    )
    strikes = models.PositiveSmallIntegerField(default=0)
    forfeited = models.BooleanField(default=False)
    joined_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ("game_id", "index")  # game_id: "game" would join to sort by Game.ordering
        constraints = [
            models.UniqueConstraint(fields=("game", "index"), name="seat_unique_index"),
            models.UniqueConstraint(
                fields=("game", "user"),
                condition=models.Q(user__isnull=False),
                name="seat_one_per_user",
            ),
            models.UniqueConstraint(
                fields=("game", "bot"),
                condition=models.Q(bot__isnull=False),
                name="seat_one_per_bot",
            ),
            models.CheckConstraint(
                condition=models.Q(user__isnull=True) | models.Q(bot__isnull=True),
                name="seat_user_or_bot",
            ),
        ]
        # A stream looks up its user's latest joins on every read (``games.stream``).
        indexes = [models.Index(fields=("user", "joined_at"), name="seat_user_joined")]

    def __str__(self) -> str:
        return f"Game {self.game_id} seat {self.index}"

    @property
    def is_taken(self) -> bool:
        return self.user_id is not None or self.bot_id is not None

    @property
    def player(self) -> str | None:
        """The name a seat shows: its user's, or ``bot:<name>`` (loads the row if needed)."""
        if self.user_id is not None:
            return self.user.get_username()
        if self.bot_id is not None:
            return f"bot:{self.bot}"
        return None


class MoveSource(models.TextChoices):
    PLAYER = "player", "Player"
    CLOCK = "clock", "Turn clock ran out"
    SERVER = "server", "Server (forfeited seat, or a bot's failed call)"


class MoveRecord(models.Model):
    """The public move log: moves never carry hidden information (engine guarantee)."""

    # No index of its own: ``move_unique_number`` begins with the game (a second one cost a
    # write per row and, at a year of a ladder, tens of megabytes).
    game = models.ForeignKey(Game, on_delete=models.CASCADE, related_name="moves",
                             db_index=False)
    number = models.PositiveIntegerField()
    version = models.PositiveIntegerField(help_text="Game version this move produced.")
    seat = models.PositiveSmallIntegerField()
    move = models.JSONField()
    source = models.CharField(max_length=8, choices=MoveSource.choices)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ("game_id", "number")
        constraints = [
            models.UniqueConstraint(fields=("game", "number"), name="move_unique_number")
        ]
        # The admin's filter by source: the moves not a player's are a handful among millions
        # (a scan of a year's moves took 0.4-1.4 s), and this index holds only those.
        indexes = [models.Index(fields=("-id",), condition=~models.Q(source="player"),
                                name="move_not_player")]

    def __str__(self) -> str:
        return f"Game {self.game_id} move {self.number}"


class EventKind(models.TextChoices):
    JOINED = "joined"
    LEFT = "left"
    STARTED = "started"
    MOVE = "move"
    STRIKE = "strike"
    FORFEITED = "forfeited"
    FINISHED = "finished"
    ABORTED = "aborted"


class GameEvent(models.Model):
    """Public event log; each event has its own game version, so ``since=N`` is exact."""

    # No index of its own: ``event_unique_version`` begins with the game (a second one cost a
    # write per row and, at a year of a ladder, tens of megabytes).
    game = models.ForeignKey(Game, on_delete=models.CASCADE, related_name="events",
                             db_index=False)
    version = models.PositiveIntegerField()
    kind = models.CharField(max_length=16, choices=EventKind.choices)
    seat = models.PositiveSmallIntegerField(null=True, blank=True)
    data = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ("game_id", "version")
        constraints = [
            models.UniqueConstraint(fields=("game", "version"), name="event_unique_version")
        ]
        # The admin's filter by kind: strikes, forfeits and aborts are rare among the joins,
        # starts and ends (a scan took 0.2 s at a year's events).
        indexes = [models.Index(fields=("kind", "id"), name="event_kind")]

    def __str__(self) -> str:
        return f"Game {self.game_id} v{self.version} {self.kind}"


class IdempotencyRecord(models.Model):
    """The first response to a request carrying an ``Idempotency-Key``, replayed on retries."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="idempotency_records"
    )
    key = models.CharField(max_length=255)
    fingerprint = models.CharField(max_length=64, help_text="sha256 of method, path and body.")
    status_code = models.PositiveSmallIntegerField()
    response_body = models.JSONField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=("user", "key"), name="idempotency_unique_key")
        ]

    def __str__(self) -> str:
        return f"{self.user_id}:{self.key}"
