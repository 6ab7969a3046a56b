from django.apps import AppConfig


class ArenaConfig(AppConfig):
    name = "arena"
    verbose_name = "Arena"

    def ready(self) -> None:
        # A tournament's games are public once over, as its standings are (games <- arena).
        from arena import selectors
        from games import hooks

        hooks.add_replay_reader(selectors.is_tournament_game)
        # ... but only once the tournament has ended: its games share deals (duplicate deals,
        # and a deal cut off by a dead worker is dealt again), so one game's seed would show
        # another's hands while that one is still to be played.
        hooks.add_replay_hold(selectors.replay_held)
        # A match's games in flight are played in its worker's memory, their clock enforced
        # there: no other process's clock check or bot turn may move them, even once that
        # worker dies (its takeover deals them again: services.live_settle).
        hooks.add_driven_games(selectors.games_in_flight)
