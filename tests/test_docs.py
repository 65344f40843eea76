import sys; sys.exit(0)  # replaced below
