"""Thread counts for benchmark scripts, fixed before NumPy loads: OpenBLAS reads its thread
count once, at import. Imports nothing heavy, so a script can use it first thing."""
import os
import sys


def fix_threads_from_argv(default, variables=("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS",
                                              "MKL_NUM_THREADS")):
    """Set the thread variables to the script's `--threads N` (or `default`); returns N."""
    threads = str(default)
    args = sys.argv[1:]
    for i, arg in enumerate(args):
        if arg == "--threads" and i + 1 < len(args):
            threads = args[i + 1]
        elif arg.startswith("--threads="):
            threads = arg.split("=", 1)[1]
    for variable in variables:
        os.environ[variable] = threads
    return threads
