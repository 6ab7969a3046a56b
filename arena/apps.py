from django.apps import AppConfig


class ArenaConfig(AppConfig):
    name = "arena"
    verbose_name = "Arena"

    def ready(self) -> None:
        # A tournament's games are public once over, as its standings are (games <- arena).
        from arena import selectors
        from games import hooks

        hooks.add_replay_reader(selectors.is_tournament_game)
