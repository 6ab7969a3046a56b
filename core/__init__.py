"""The HTTP API's shared conventions, below every app: one error body (``api_errors``), strict
input (``strict``, ``parsers``), authentication, fail-open rate limits (``throttling``),
process counters (``metrics``), URL converters and the cached schema view.

It imports no app of the project, so ``games``, ``bots`` and ``arena`` can all build on it and
the arrows still point one way: core <- games <- bots <- arena."""
