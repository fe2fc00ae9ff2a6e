"""``python -m deepgemm`` and the ``deepgemm`` console script: the command-line tool shipped in the
wheel (``deepgemm run``, ``plan``, ``gen``, ``warm``; ``deepgemm --help``)."""
import os
import sys


def main() -> None:
    tool = os.path.join(os.path.dirname(os.path.abspath(__file__)), "bin", "deepgemm")
    if not os.access(tool, os.X_OK):
        sys.exit(f"deepgemm: the command-line tool is not part of this installation ({tool} is missing); "
                 "install the wheel (pip install .) or build it with CMake")
    os.execv(tool, [tool] + sys.argv[1:])


if __name__ == "__main__":
    main()
