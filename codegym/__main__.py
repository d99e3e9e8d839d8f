"""`python -m codegym` is the `codegym` command."""

import sys

from codegym.cli import main

sys.exit(main())
