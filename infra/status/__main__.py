import sys

from infra.status import main

sys.exit(main())
