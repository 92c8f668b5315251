"""python3 -m workbook: the same as ./workbook."""
import sys

from .cli import main

sys.exit(main(sys.argv[1:]))
