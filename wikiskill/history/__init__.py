"""Looking back at a workspace: `status` and `log`, one round's story, the HTML report (also
served live while a run goes), the audit of every merge, comparing two refs, the review queue,
and rollback. Read from git after the fact (rollback writes one commit); it may import every
layer below it (`core` to `loop`)."""
