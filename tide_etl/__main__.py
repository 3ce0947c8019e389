import sys

from tide_etl.cli import main

sys.exit(main())
