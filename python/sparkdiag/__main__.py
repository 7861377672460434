"""`python -m sparkdiag ARGS`: the command line, as if `sparkdiag ARGS` were typed."""

import os
import sys

from sparkdiag import binary


def main() -> None:
    path = binary()
    if os.name == "nt":
        import subprocess

        sys.exit(subprocess.call([path, *sys.argv[1:]]))
    os.execv(path, [path, *sys.argv[1:]])


if __name__ == "__main__":
    main()
