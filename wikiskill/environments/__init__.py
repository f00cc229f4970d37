"""Where a task's commands run: the task-environment contract (`base`: run a command in the task's
workdir under a time limit and an output budget, copy files in and out, close), a folder on this
machine (`host`, under `bubblewrap` when it is installed) and a container per task (`container`,
over the docker or podman command line in `runtime`) or a compose project per multi-container
task (`compose`), the network each phase of a task gets (`network`), the images those containers
start from, built once per environment digest (`images`, heredocs rewritten for a builder without
them in `heredoc`), the sweep of containers a killed wikiskill left
behind (`orphans`), and the base image wikiskill makes without any image registry
(`base_image`). It may import `core` and `benchmarks` only. Its section of wikiskill.yaml
(`environment`) is `settings`, in core's layer."""
