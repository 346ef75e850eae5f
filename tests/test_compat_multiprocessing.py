"""ember.multiprocessing and shared memory: share_memory_/is_shared, tensors through queues and
into children arriving on the *same* memory (fork, spawn, forkserver), Module.share_memory for
Hogwild, spawn's error reporting, and torch.multiprocessing's names."""
import multiprocessing

import pytest

import ember
import ember.multiprocessing as mp


def _add_rank(rank, t):
    t[rank] += rank + 1


def _fill_received(queue, done):
    x = queue.get()
    x.fill_(7.0)
    done.put(x.is_shared())


def _fail(rank):
    if rank == 1:
        raise ValueError("child one failed")


def _exit_code(rank):
    import sys

    sys.exit(3)


def _sgd_steps(rank, model, steps):
    opt = ember.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(steps):
        opt.zero_grad()
        model(ember.ones(1, 2)).sum().backward()
        opt.step()


def test_share_memory_moves_a_tensor_in_place():
    t = ember.arange(6.0).reshape(2, 3)
    assert not t.is_shared()
    assert t.share_memory_() is t and t.is_shared()
    assert t.tolist() == [[0, 1, 2], [3, 4, 5]] and t[1].is_shared()  # views of it share too
    view = ember.arange(8.0)[2:5]
    assert view.share_memory_() is view and view.tolist() == [2.0, 3.0, 4.0]
    assert view.is_shared() and view._base.is_shared()
    view[0] = -1.0
    assert view._base[2].item() == -1.0  # still a view of its (moved) base


def test_module_share_memory_for_hogwild():
    model = ember.nn.Linear(2, 1)
    assert model.share_memory() is model
    assert all(p.is_shared() for p in model.parameters())
    before = model.weight.clone()
    ctx = multiprocessing.get_context("fork")
    workers = [ctx.Process(target=_sgd_steps, args=(rank, model, 3)) for rank in range(2)]
    for p in workers:
        p.start()
    for p in workers:
        p.join()
    assert [p.exitcode for p in workers] == [0, 0]
    # six SGD steps of lr 0.1 on d(w.x)/dw = x = 1: both workers' updates landed here
    assert ember.allclose(model.weight, before - 0.6)


@pytest.mark.parametrize("method", ["fork", "spawn", "forkserver"])
def test_tensors_through_a_queue_arrive_sharing_memory(method):
    ctx = mp.get_context(method)
    queue, done = ctx.Queue(), ctx.Queue()
    child = ctx.Process(target=_fill_received, args=(queue, done))
    child.start()
    x = ember.zeros(3)
    queue.put(x)
    assert done.get(timeout=120) is True
    child.join()
    assert x.is_shared() and x.tolist() == [7.0, 7.0, 7.0]  # the child wrote our memory


def test_spawn_runs_every_rank_on_shared_memory():
    t = ember.zeros(3).share_memory_()
    assert mp.spawn(_add_rank, args=(t,), nprocs=3) is None
    assert t.tolist() == [1.0, 2.0, 3.0]
    context = mp.start_processes(_add_rank, args=(t,), nprocs=1, join=False,
                                 start_method="fork")
    while not context.join():
        pass
    assert t.tolist() == [2.0, 2.0, 3.0]


def test_spawn_reports_a_childs_exception_and_exit_code():
    with pytest.raises(mp.ProcessRaisedException, match="child one failed") as error:
        mp.spawn(_fail, nprocs=2)
    assert error.value.error_index == 1
    assert "-- Process 1 terminated with the following error:" in str(error.value)
    with pytest.raises(mp.ProcessExitedException, match="terminated with exit code 3"):
        mp.spawn(_exit_code, nprocs=1)


def test_non_leaf_tensors_that_require_grad_are_refused():
    from multiprocessing.reduction import ForkingPickler

    y = ember.ones(2, requires_grad=True) * 2
    with pytest.raises(RuntimeError, match="Cowardly refusing to serialize non-leaf tensor"):
        ForkingPickler.dumps(y)


def test_names_of_torch_multiprocessing():
    torch_mp = pytest.importorskip("torch.multiprocessing")
    ours = {n for n in dir(mp) if not n.startswith("_")}
    missing = {n for n in torch_mp.__all__ if n not in ours}
    assert not missing, missing
    assert mp.get_sharing_strategy() == "file_descriptor"
    assert mp.get_all_sharing_strategies() == {"file_descriptor"}
    with pytest.raises(ValueError, match="unknown sharing strategy"):
        mp.set_sharing_strategy("file_system_please")
