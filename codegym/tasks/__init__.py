"""Tasks: the YAML schema of a task, loading, suites, curricula, runtimes and repositories."""
