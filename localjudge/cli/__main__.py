"""`python -m localjudge.cli ...`, the same as the `localjudge` command."""

import sys

from localjudge.cli.main import main

sys.exit(main())
