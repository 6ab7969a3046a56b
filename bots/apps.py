from django.apps import AppConfig


class BotsConfig(AppConfig):
    name = "bots"
    verbose_name = "Bots"

    def ready(self) -> None:
        # Games know bots only through these hooks (the import arrow is games <- bots).
        from bots import dispatch, runner, selectors, services
        from games import hooks

        hooks.on_change(dispatch.on_change)
        hooks.set_seat_check(services.seat_check)
        hooks.set_driven_check(runner.is_driven_here)
        hooks.add_replay_reader(selectors.owns_a_seated_bot)
