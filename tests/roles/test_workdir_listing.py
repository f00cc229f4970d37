"""The working directory as the workdir agent's first prompt shows it: every file by name and
size, the small text files whole within a budget, read from a folder on this machine or with
commands run in any task environment, and a digest that changes when a file does."""

import asyncio
import os
from pathlib import Path

from wikiskill.environments.host import HostFolder
from wikiskill.roles.workdir_listing import (
    MAX_LISTED,
    MAX_TEXT_BYTES,
    Entry,
    EnvironmentListing,
    FolderListing,
    listing_of,
    render_listing,
)


def task_folder(root: Path) -> Path:
    (root / "src").mkdir(parents=True)
    (root / "src" / "solution.py").write_text("def add(a, b):\n    return a - b\n")
    (root / "README.md").write_text("Fix add.\n")
    (root / "data.bin").write_bytes(b"\x00\x01\x02")
    (root / "big.txt").write_text("x" * (MAX_TEXT_BYTES + 1))
    (root / ".git").mkdir()
    (root / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (root / "node_modules" / "left-pad").mkdir(parents=True)
    (root / "node_modules" / "left-pad" / "index.js").write_text("module.exports = 1\n")
    os.symlink("/etc/hostname", root / "link")
    return root


def test_the_listing_names_every_file_and_shows_the_small_text_ones_whole():
    text = render_listing(
        [Entry("b.py", 12, "print('b')\n"), Entry("a.txt", 3, "hi\n"), Entry("blob", 9, None)], chars=1000
    )
    assert text.splitlines()[:4] == [
        "Files in the working directory:",
        "a.txt (3 bytes)",
        "b.py (12 bytes)",
        "blob (9 bytes)",
    ]
    assert text.endswith("Their contents:\n--- a.txt ---\nhi\n\n--- b.py ---\nprint('b')")
    assert "--- blob ---" not in text and "not shown" not in text


def test_past_the_budget_the_smallest_files_are_shown_and_the_others_named():
    entries = [Entry("small.txt", 5, "tiny\n"), Entry("large.txt", 400, "y" * 400)]
    text = render_listing(entries, chars=430)  # the large one alone would fit
    assert "--- small.txt ---" in text and "--- large.txt ---" not in text
    assert "(not shown, over the listing's budget: large.txt; read them with a command)" in text


def test_an_empty_folder_says_so_and_a_crowded_one_lists_a_count_of_the_rest():
    assert render_listing([]) == "The working directory is empty."
    many = [Entry(f"f{index:04d}", 1, None) for index in range(MAX_LISTED + 7)]
    assert "... and 7 more" in render_listing(many)


def test_a_folder_on_this_machine_is_listed_without_its_tool_folders_links_or_large_and_binary_text(tmp_path):
    listing = listing_of(HostFolder(task_folder(tmp_path / "work"), sandbox=False))
    assert isinstance(listing, FolderListing)
    entries = {entry.path: entry for entry in asyncio.run(listing.entries())}
    assert sorted(entries) == ["README.md", "big.txt", "data.bin", "link", "src/solution.py"]
    assert entries["src/solution.py"].text == "def add(a, b):\n    return a - b\n"
    assert entries["big.txt"].text is entries["data.bin"].text is entries["link"].text is None
    assert entries["data.bin"].size == 3


def test_commands_in_an_environment_list_the_same_files_with_the_same_texts(tmp_path):
    folder = task_folder(tmp_path / "work")
    by_commands = asyncio.run(EnvironmentListing(HostFolder(folder, sandbox=False)).entries())
    on_disk = asyncio.run(FolderListing(folder).entries())
    assert {e.path: e.text for e in by_commands} == {e.path: e.text for e in on_disk}


def test_the_state_changes_when_a_file_changes_and_not_when_a_skipped_folder_does(tmp_path):
    folder = task_folder(tmp_path / "work")
    for version, listing in enumerate([FolderListing(folder), EnvironmentListing(HostFolder(folder, sandbox=False))]):
        before = asyncio.run(listing.state())
        (folder / "node_modules" / "left-pad" / "index.js").write_text(f"module.exports = {version + 2}\n")
        assert asyncio.run(listing.state()) == before
        (folder / "src" / "solution.py").write_text(f"def add(a, b):\n    return a {'+*'[version]} b\n")  # same size
        assert asyncio.run(listing.state()) != before
