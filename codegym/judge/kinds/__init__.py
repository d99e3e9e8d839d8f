"""The test kinds: how each kind of task runs its cases (stdio, function, script; repo)."""
