"""Test support shipped with the package (as `typer.testing` is): a local OpenAI-compatible
server that tests, benchmarks and users' own test suites point litellm at. Nothing in the
product imports it; it may import any layer."""
