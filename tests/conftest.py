import os
import subprocess
import tempfile
from pathlib import Path

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
# Shared across tests (and test runs): generated games and the datasets cache are pure functions
# of their inputs, so sharing them only saves time.
_SHARED = Path(tempfile.gettempdir()) / "wikiskill-test-cache"
os.environ.setdefault("WIKISKILL_CACHE_DIR", str(_SHARED / "wikiskill"))
os.environ.setdefault("HF_HOME", str(_SHARED / "hf"))


@pytest.fixture(autouse=True)
def git_identity(monkeypatch, tmp_path_factory):
    """Tests never depend on the machine's git config (CI machines have none)."""
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("GIT_AUTHOR_NAME", "Test Person")
    monkeypatch.setenv("GIT_AUTHOR_EMAIL", "person@example.invalid")
    monkeypatch.setenv("GIT_COMMITTER_NAME", "Test Person")
    monkeypatch.setenv("GIT_COMMITTER_EMAIL", "person@example.invalid")


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout
