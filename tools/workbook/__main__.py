"""python3 -m workbook: the same as ./workbook."""
import signal
import sys

from .cli import main

# Output piped into head or less that closes early ends the command quietly,
# as any Unix tool does, instead of a BrokenPipeError traceback.
signal.signal(signal.SIGPIPE, signal.SIG_DFL)
sys.exit(main(sys.argv[1:]))
