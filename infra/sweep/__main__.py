import sys

from infra.sweep.cli import main

sys.exit(main())
