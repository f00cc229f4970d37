"""What the loop learns, as text: Agent Skills folders and the skills block of a
prompt, proposals turned into skill files and the PURPOSE.md history kept beside them, the wiki's
pattern pages and their index, whether a text meant as prose is code (`codetext`), text edits,
links, consolidation, BM25 search and the lint of both hand-editable layers. Pure functions over
files' contents; it may import `core`, `benchmarks` and `store`, never a model or a role. Its
sections of wikiskill.yaml (`skills`, `wiki`) are `settings`, in core's layer."""
