"""Task environments: where a task's commands run. A container runtime reached through its own
command-line client (`docker`, or `podman` through the same interface), and the base image that
wikiskill makes without any image registry (`base_image`). It may import `core` and `benchmarks`."""
