import sys

from infra.local.cli import main

sys.exit(main())
