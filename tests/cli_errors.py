"""A wikiskill command run in process, and the one error line a refused command prints."""

from typer.testing import CliRunner

from wikiskill.cli import app


def run(*args: str):
    return CliRunner().invoke(app, list(args))


def one_error_line(result) -> str:
    assert result.exit_code == 1, result.output
    assert "Traceback" not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    errors = result.stderr.strip().splitlines()
    assert len(errors) == 1 and errors[0].startswith("error: "), result.stderr
    return errors[0]
