import sys

from judgeboard.cli import main

sys.exit(main())
