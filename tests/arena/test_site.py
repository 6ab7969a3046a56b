"""The site's public pages: docs served offline, schema valid, admin reachable."""

from __future__ import annotations

import re

import pytest
from django.core.management import call_command
from django.test import Client


@pytest.mark.django_db  # makemigrations reads the applied migrations
def test_every_model_change_has_its_migration() -> None:
    call_command("makemigrations", "--check", "--dry-run", verbosity=0)


def test_the_openapi_schema_validates_without_warnings() -> None:
    call_command("spectacular", "--validate", "--fail-on-warn", "--file", "/dev/null")


@pytest.mark.django_db
@pytest.mark.parametrize("path", ["/api/docs/", "/api/redoc/"])
def test_the_api_docs_load_their_assets_from_this_server(client: Client, path: str) -> None:
    page = client.get(path)
    assert page.status_code == 200
    html = page.content.decode()
    assets = re.findall(r'(?:src|href)="([^"]+)"', html)
    assert assets, "the docs page references no assets"
    for asset in assets:
        assert not asset.startswith(("http://", "https://", "//")), asset
    scripts = [a for a in assets if a.endswith(".js")]
    for script in scripts:
        assert client.get(script).status_code == 200, script


@pytest.mark.django_db
def test_the_schema_is_served(client: Client) -> None:
    response = client.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json")
    assert response.status_code == 200
    assert response.json()["info"]["title"] == "Uno Arena API"


@pytest.mark.django_db
def test_an_admin_can_log_in(client: Client, django_user_model) -> None:  # type: ignore[no-untyped-def]
    django_user_model.objects.create_superuser("root", password="root-password-1")
    assert client.login(username="root", password="root-password-1")
    assert client.get("/admin/").status_code == 200


@pytest.mark.django_db
def test_the_health_check_reports_the_database(client: Client) -> None:
    response = client.get("/healthz/")
    assert response.status_code == 200
    assert response.json()["status"] == "ok"
