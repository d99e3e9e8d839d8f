"""`python -m codegym` is the `codegym` command."""

import sys

from codegym.cli.main import main

sys.exit(main())
