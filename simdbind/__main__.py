import sys

from simdbind.cli import main

sys.exit(main())
