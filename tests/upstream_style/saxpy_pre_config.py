"""A sibling module, imported by name as upstream's kernels import their configs."""
threads_per_task = 256
