"""The engine's RNG state moves out of ``Game.state`` into ``Game.rng``; ``turn_deadline``
loses its index. Both make a move's update of the game row smaller (see games.rows)."""

from django.db import migrations, models


def rng_apart(apps, schema_editor):  # type: ignore[no-untyped-def]
    Game = apps.get_model("games", "Game")
    for game in Game.objects.exclude(state=None).iterator():
        if "rng" in game.state:
            game.rng = game.state.pop("rng")
            game.save(update_fields=["state", "rng"])


def rng_within(apps, schema_editor):  # type: ignore[no-untyped-def]
    Game = apps.get_model("games", "Game")
    for game in Game.objects.exclude(state=None).exclude(rng=None).iterator():
        game.state["rng"] = game.rng
        game.save(update_fields=["state"])


class Migration(migrations.Migration):
    dependencies = [("games", "0004_game_change_notify_details")]

    operations = [
        migrations.AddField(
            model_name="game",
            name="rng",
            field=models.JSONField(blank=True, help_text="Engine RNG state; secret.", null=True),
        ),
        migrations.AlterField(
            model_name="game",
            name="turn_deadline",
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.RunPython(rng_apart, rng_within),
    ]
