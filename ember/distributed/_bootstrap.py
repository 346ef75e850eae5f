"""What each rank runs first under the launcher: torchrun's environment, then the script.

    mpiexec -n 2 python -m ember.distributed._bootstrap train.py --lr 0.1

(`ember.distributed.run` writes that command line.) The MPI launcher tells each process
its place in its own variables (Open MPI: OMPI_COMM_WORLD_RANK, ...; MPICH and Intel MPI:
PMI_RANK, MPI_LOCALRANKID, ...; Slurm's srun: SLURM_PROCID, SLURM_LOCALID, ...); this
module turns them into torchrun's RANK, LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE,
GROUP_RANK, ROLE_RANK and ROLE_WORLD_SIZE before the script starts, so a script written for
torchrun finds what it reads -- without starting MPI, which waits for init_process_group.

If the script raises (or exits with a non-zero status), the traceback is printed, then one
line naming the rank, which the launcher repeats in its summary; then the whole MPI job is
ended (MPI_Abort, or a non-zero exit that mpiexec acts on) so that no rank waits for this one.

Read next: `run.py`, the launcher.
"""
import os
import runpy
import sys
import traceback

__all__ = ["torchrun_environment", "main"]

FAILURE_MARK = "ember.distributed.run: rank"

# (rank, world size, local rank, local world size) as each MPI launcher names them
_LAUNCHERS = (
    ("OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK",
     "OMPI_COMM_WORLD_LOCAL_SIZE"),
    ("PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID", "MPI_LOCALNRANKS"),
    ("PMIX_RANK", "PMIX_SIZE", "PMIX_LOCAL_RANK", "PMIX_LOCAL_SIZE"),
    ("SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID", "SLURM_NTASKS_PER_NODE"),
)


def torchrun_environment(environ):
    """torchrun's per-rank variables, computed from the MPI launcher's."""
    for rank, size, local_rank, local_size in _LAUNCHERS:
        if rank in environ and size in environ:
            break
    else:
        raise RuntimeError("ember.distributed._bootstrap runs under an MPI launcher (mpiexec, "
                           "srun); start the job with python -m ember.distributed.run")
    world = int(environ[size])
    local = int(environ.get(local_rank, environ[rank]))
    # Slurm writes "2(x3)" for uneven nodes; the launcher's own setting wins when it has one
    per_node = environ.get("EMBER_RUN_NPROC_PER_NODE") or environ.get(local_size, str(world))
    per_node = int(per_node.split("(")[0])
    return {"RANK": environ[rank], "WORLD_SIZE": str(world), "LOCAL_RANK": str(local),
            "LOCAL_WORLD_SIZE": str(per_node), "GROUP_RANK": str(int(environ[rank]) // per_node),
            "ROLE_RANK": environ[rank], "ROLE_WORLD_SIZE": str(world)}


def main(argv):
    """`[--module | --no-python] target args...`: set the environment and run the target."""
    os.environ.update(torchrun_environment(os.environ))
    mode = "script"
    if argv and argv[0] in ("--module", "--no-python"):
        mode, argv = argv[0][2:], argv[1:]
    if mode == "no-python":
        os.execvp(argv[0], argv)  # another program: mpiexec sees its exit status directly
    sys.argv = list(argv)
    try:
        if mode == "module":
            runpy.run_module(argv[0], run_name="__main__", alter_sys=True)
        else:
            sys.path.insert(0, os.path.dirname(os.path.abspath(argv[0])))
            runpy.run_path(argv[0], run_name="__main__")
    except SystemExit as stop:
        if stop.code not in (None, 0):
            _fail(f"exited with status {stop.code}", stop.code if isinstance(stop.code, int)
                  else 1)
        raise
    except BaseException as error:  # every way a rank can fail ends the job
        traceback.print_exc()
        first_line = str(error).splitlines()[0] if str(error) else ""
        _fail(f"raised {type(error).__name__}: {first_line}", 1)


def _fail(what, status):
    rank, local = os.environ.get("RANK"), os.environ.get("LOCAL_RANK")
    sys.stdout.flush()
    sys.stderr.write(f"{FAILURE_MARK} {rank} (local rank {local}) {what}\n")
    sys.stderr.flush()
    MPI = sys.modules.get("mpi4py.MPI")
    if MPI is not None and MPI.Is_initialized() and not MPI.Is_finalized():
        MPI.COMM_WORLD.Abort(status)
    os._exit(status)


if __name__ == "__main__":
    main(sys.argv[1:])
