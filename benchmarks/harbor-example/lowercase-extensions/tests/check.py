"""Checks lowercase-extensions, one score a part."""

from pathlib import Path

from partial import report

folder = Path("/app/photos")
names = sorted(path.name for path in folder.iterdir())
expected = sorted([f"IMG_{n:03d}.jpg" for n in range(1, 6)] + ["keep.png"])
contents = all((folder / f"IMG_{n:03d}.jpg").is_file() and
               (folder / f"IMG_{n:03d}.jpg").read_text() == f"image {n}\n" for n in range(1, 6))
kept = (folder / "keep.png").is_file() and (folder / "keep.png").read_text() == "not a jpeg\n"
report({"names": names == expected, "contents": contents}, kept=kept)
