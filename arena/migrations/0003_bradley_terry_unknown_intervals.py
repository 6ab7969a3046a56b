"""Finalized tournaments' Bradley-Terry intervals that the games could not give, stored as a
point (``low == high``: fewer than two distinct resampling units, or every resample alike) or
for a bot with no games, become unknown (``null``), as ``arena.ratings.bt`` now gives them
(docs/ratings.md). The reverse leaves them unknown: the point was never an interval."""

from django.db import migrations


def unknown_intervals(apps, schema_editor):  # type: ignore[no-untyped-def]
    Tournament = apps.get_model("arena", "Tournament")
    for tournament in Tournament.objects.exclude(finalized_at=None).iterator():
        fitted = tournament.bradley_terry
        rows = fitted.get("ratings") if isinstance(fitted, dict) else None
        if not isinstance(rows, list):
            continue
        changed = False
        for row in rows:
            if not isinstance(row, dict) or row.get("low") is None or row.get("high") is None:
                continue
            if row["low"] == row["high"] or row.get("games") == 0:
                row["low"] = row["high"] = None
                changed = True
        if changed:
            tournament.save(update_fields=["bradley_terry"])


class Migration(migrations.Migration):
    dependencies = [("arena", "0002_match_plan")]

    operations = [migrations.RunPython(unknown_intervals, migrations.RunPython.noop)]
