"""The ``codegym`` command: one module per verb group (entry point ``codegym.cli.main:main``)."""
