"""Settings for bench/api.py: the project's own, plus the bare comparison endpoint's URL."""

from arena.settings import *  # noqa: F403

ROOT_URLCONF = "bench_urls"
# The benchmark measures the server, not the rate limiter.
REST_FRAMEWORK = {
    **REST_FRAMEWORK,  # noqa: F405
    "DEFAULT_THROTTLE_RATES": {"signup": None, "token": None, "move": None},
}
