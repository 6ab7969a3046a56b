"""Every REST endpoint, under /api/. Each app contributes its own router or paths."""

urlpatterns: list = []
