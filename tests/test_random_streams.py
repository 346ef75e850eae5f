"""torch's CPU random streams, bit for bit: after the same seed, every random function gives
what torch gives (compared as bit patterns), for sizes around torch's code-path boundaries
(Box-Muller blocks of 16, 32- vs 64-bit integer draws at 2**28, ...), every float dtype, with
the global generator and with explicit ones; and the generator state round-trips with torch's
own bytes."""
import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")

SIZES = [1, 2, 3, 15, 16, 17, 31, 33, 1000, 4099]
FLOATS = ["float32", "float64", "float16", "bfloat16"]


def bits(t):
    """The raw bytes of a tensor as an integer array (NaNs and signed zeros compare exactly)."""
    t = t.detach()
    if isinstance(t, torch.Tensor):
        a = (t.view(torch.int16) if t.dtype == torch.bfloat16 else t).numpy()
    else:
        a = t.numpy(force=True)
    a = np.ascontiguousarray(a)
    return a.view(f"u{min(a.itemsize, 8)}")  # complex128: two uint64 per element


def assert_same(e, t):
    if isinstance(t, (list, tuple)):
        assert len(e) == len(t)
        for a, b in zip(e, t):
            assert_same(a, b)
        return
    if not isinstance(t, torch.Tensor):
        assert e == t
        return
    assert str(e.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
    assert tuple(e.shape) == tuple(t.shape)
    assert e.stride() == t.stride()
    eb, tb = bits(e), bits(t)
    if not np.array_equal(eb, tb):
        bad = np.flatnonzero(eb.reshape(-1) != tb.reshape(-1))
        raise AssertionError(f"{bad.size} of {tb.size} differ, first at {bad[:5]}: ember "
                             f"{e.reshape(-1)[bad[:3].tolist()]}, torch "
                             f"{t.reshape(-1)[bad[:3].tolist()]}")


def same_stream(fn, seed=0):
    """fn(lib, generator) after manual_seed(seed), with generator None and a fresh Generator
    seeded alike; each result must equal torch's, and so must a draw made afterwards."""
    for explicit in (False, True):
        results = []
        for lib in (torch, ember):
            lib.manual_seed(seed)
            g = lib.Generator().manual_seed((seed + 1) % 2**64) if explicit else None
            results.append((fn(lib, g), lib.rand(3, generator=g)))
        assert_same(results[1], results[0])


def dtype(lib, name):
    return getattr(lib, name)


# ----------------------------------------------------------------------------------------------
# the factories


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("name", FLOATS)
def test_rand_and_randn(n, name):
    same_stream(lambda m, g: [m.rand(n, dtype=dtype(m, name), generator=g),
                              m.randn(n, dtype=dtype(m, name), generator=g),
                              m.randn(n, dtype=dtype(m, name), generator=g)])


@pytest.mark.parametrize("name", FLOATS)
def test_large_draws(name):
    """Past the chunks ember computes Box-Muller in (2048 blocks of 16)."""
    n = 100_003
    same_stream(lambda m, g: [m.randn(n, dtype=dtype(m, name), generator=g),
                              m.rand(n, dtype=dtype(m, name), generator=g),
                              m.empty(n, dtype=dtype(m, name)).normal_(1.5, 0.5, generator=g),
                              m.randint(-2**40, 2**40, (n,), generator=g)])


def test_random_warnings():
    """Bounds past 2**digits warn (the dtype cannot hold every integer) and still draw as
    torch does."""
    import warnings

    def draws(m, g):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            out = [m.randint(0, 2**30, (50,), dtype=m.float32, generator=g),
                   m.empty(50, dtype=m.float16).random_(0, 65504, generator=g),
                   m.empty(50, dtype=m.bfloat16).random_(-2**20, 2**20, generator=g)]
        return out + [len(caught)]
    same_stream(draws)


@pytest.mark.parametrize("n", [1, 3, 8, 9, 100])
@pytest.mark.parametrize("name", ["complex64", "complex128"])
def test_complex(n, name):
    """Complex samples are real samples of twice the count read as (real, imaginary) pairs;
    normals take std / sqrt(2) per part."""
    def draws(m, g):
        c = dtype(m, name)
        base = m.zeros(n + 1, 3, dtype=c)
        return [m.rand(n, dtype=c, generator=g), m.randn(n, dtype=c, generator=g),
                m.empty(n, dtype=c).uniform_(-2, 3, generator=g),
                m.empty(n, dtype=c).normal_(0.5, 2.0, generator=g),
                m.rand_like(base.t(), generator=g), m.randn_like(base.t(), generator=g),
                m.normal(1.0, 3.0, (n,), dtype=c, generator=g)]
    same_stream(draws)


DTYPE_OPS = {
    "rand": lambda m, d, g: m.rand(5, dtype=d, generator=g),
    "randn": lambda m, d, g: m.randn(5, dtype=d, generator=g),
    "randint": lambda m, d, g: m.randint(0, 5, (5,), dtype=d, generator=g),
    "random_": lambda m, d, g: m.empty(5, dtype=d).random_(generator=g),
    "random_(0, 5)": lambda m, d, g: m.empty(5, dtype=d).random_(0, 5, generator=g),
    "random_(3, None)": lambda m, d, g: m.empty(5, dtype=d).random_(3, None, generator=g),
    "bernoulli_": lambda m, d, g: m.empty(5, dtype=d).bernoulli_(0.5, generator=g),
    "uniform_": lambda m, d, g: m.empty(5, dtype=d).uniform_(generator=g),
    "normal_": lambda m, d, g: m.empty(5, dtype=d).normal_(generator=g),
    "exponential_": lambda m, d, g: m.empty(5, dtype=d).exponential_(generator=g),
    "geometric_": lambda m, d, g: m.empty(5, dtype=d).geometric_(0.5, generator=g),
    "randperm": lambda m, d, g: m.randperm(5, dtype=d, generator=g),
}


@pytest.mark.parametrize("name", ["bool", "uint8", "int8", "uint16", "uint32", "uint64",
                                  "float8_e4m3fn", "float8_e5m2", "complex64"])
@pytest.mark.parametrize("op", list(DTYPE_OPS))
def test_which_dtypes_each_kernel_takes(op, name):
    """Each kernel takes the dtypes torch's is compiled for: the same draws, or the same
    error."""
    import warnings

    outcomes = []
    for lib in (torch, ember):
        lib.manual_seed(0)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                out = DTYPE_OPS[op](lib, dtype(lib, name), None)
            outcomes.append(bits(out))
        except Exception as e:  # noqa: BLE001 -- the type is what is compared
            outcomes.append(type(e))
    if isinstance(outcomes[0], type):
        assert outcomes[1] is outcomes[0]
    else:
        np.testing.assert_array_equal(outcomes[1], outcomes[0])


@pytest.mark.parametrize("shape", [(0,), (2, 3), (4, 4), (3, 5, 7), ()])
def test_shapes(shape):
    same_stream(lambda m, g: [m.rand(shape, generator=g), m.randn(shape, generator=g),
                              m.randint(7, shape, generator=g)])


def test_the_normal_cache_carries_between_calls():
    """One-at-a-time normals come in pairs; the second waits in the generator, through
    other draws, and is used (with the new mean and std) by the next one-at-a-time draw."""
    same_stream(lambda m, g: [m.randn(3, generator=g), m.randn(20, generator=g),
                              m.rand(2, generator=g), m.randn(1, dtype=m.float64, generator=g),
                              m.empty(5).normal_(2.0, 3.0, generator=g),
                              m.empty(3, dtype=m.float64).log_normal_(generator=g)])


BOUNDS = [(0, 10), (-5, 5), (0, 2**28 - 1), (0, 2**28), (-2**40, 2**40), (0, 2**63 - 1),
          (-2**63, 2**63 - 1), (3, 4)]
RANDINT_CASES = [  # bounds the dtype holds (beyond 2**24 floats warn: test_random_warnings)
    (low, high, name) for low, high in BOUNDS for name in ("int64", "int32", "float32", "float64")
    if (name == "int64" or (name == "int32" and -2**31 <= low and high <= 2**31)
        or (name.startswith("float") and max(abs(low), abs(high)) <= 2**24))]


@pytest.mark.parametrize("low,high,name", RANDINT_CASES)
def test_randint(low, high, name):
    same_stream(lambda m, g: m.randint(low, high, (1000,), dtype=dtype(m, name), generator=g))


@pytest.mark.parametrize("name", ["uint8", "int8", "int16", "bool", "float16", "bfloat16"])
def test_randint_small_types(name):
    high = {"uint8": 256, "int8": 128, "int16": 1000, "bool": 2, "float16": 2048,
            "bfloat16": 256}[name]
    same_stream(lambda m, g: m.randint(0, high, (500,), dtype=dtype(m, name), generator=g))


@pytest.mark.parametrize("n", [0, 1, 2, 3, 10, 1000, 5000])
def test_randperm(n):
    same_stream(lambda m, g: [m.randperm(n, generator=g),
                              m.randperm(n, dtype=m.float32, generator=g)])


@pytest.mark.parametrize("name", ["log", "log1p", "exp", "tan", "sin", "cos"])
def test_libm_equals_the_c_library(name):
    """ember's vectorised libm (NumPy where it rounds like libm, a double-double shortcut for
    log, math's C calls otherwise) equals Python's math module, which calls libm."""
    import math

    from ember._random_math import libm

    rng = np.random.default_rng(1)
    u = rng.integers(0, 2**53, 30000) * 2.0 ** -53
    x = {"log": np.concatenate([1 - u, np.exp(rng.uniform(-700, 700, 5000)),
                                [1.0, 0.5, 2.0, 5e-324, 1.7e308]]),
         "log1p": -u, "exp": rng.uniform(-700, 700, 30000), "tan": math.pi * (u - 0.5),
         "sin": 2 * math.pi * u, "cos": 2 * math.pi * u}[name]
    expected = np.array([getattr(math, name)(v) for v in x.tolist()])
    np.testing.assert_array_equal(libm(name, x).view(np.uint64), expected.view(np.uint64))


def test_randperm_large():
    same_stream(lambda m, g: m.randperm(100_000, generator=g))


def test_the_shuffle_without_a_loop_is_the_loop():
    """ember applies torch's sequential Fisher-Yates swaps all at once (_forward_shuffle);
    checked against the plain loop on random offsets, short and long."""
    from ember._random_kernels import _forward_shuffle

    rng = np.random.default_rng(0)
    for n in [0, 1, 2, 3, 5, 17, 64, 1000] + [int(k) for k in rng.integers(2, 200, 50)]:
        offsets = np.array([rng.integers(0, n - i) for i in range(max(n - 1, 0))], np.int64)
        perm = list(range(n))
        for i, z in enumerate(offsets.tolist()):
            perm[i], perm[i + z] = perm[i + z], perm[i]
        np.testing.assert_array_equal(_forward_shuffle(offsets, n), perm)


@pytest.mark.parametrize("name", FLOATS)
def test_like_functions_follow_memory_order(name):
    def draws(m, g):
        base = m.ones(6, 5, dtype=dtype(m, name))
        return [m.rand_like(base, generator=g), m.rand_like(base.t(), generator=g),
                m.randn_like(base.t(), generator=g), m.randn_like(base, generator=g),
                m.randint_like(base.t(), 3, 9, generator=g),
                m.randint_like(base, 10, generator=g)]
    same_stream(draws)


# ----------------------------------------------------------------------------------------------
# in-place methods


@pytest.mark.parametrize("n", [1, 15, 16, 17, 100, 1023])
@pytest.mark.parametrize("name", FLOATS)
def test_uniform_and_normal_in_place(n, name):
    def draws(m, g):
        t = m.empty(n, dtype=dtype(m, name))
        return [t.uniform_(-0.37, 0.81, generator=g).clone(),
                t.uniform_(2, 3, generator=g).clone(),
                t.normal_(0.25, 1.5, generator=g).clone(),
                t.normal_(-3.0, generator=g).clone(), t.normal_(0, 0.02, generator=g).clone()]
    same_stream(draws)


@pytest.mark.parametrize("name", FLOATS)
def test_in_place_on_non_contiguous_views(name):
    def draws(m, g):
        t = m.zeros(8, 6, dtype=dtype(m, name))
        t.t().normal_(generator=g)
        t[:, 1].uniform_(generator=g)
        t[::2].exponential_(generator=g)
        t.t()[1:].bernoulli_(0.3, generator=g)
        return t
    same_stream(draws)


@pytest.mark.parametrize("name", FLOATS)
def test_other_distributions(name):
    def draws(m, g):
        t = m.empty(40, dtype=dtype(m, name))
        return [t.exponential_(generator=g).clone(), t.exponential_(3.5, generator=g).clone(),
                t.geometric_(0.3, generator=g).clone(), t.log_normal_(generator=g).clone(),
                t.log_normal_(0.5, 0.25, generator=g).clone(),
                t.cauchy_(generator=g).clone(), t.cauchy_(1.5, 0.5, generator=g).clone()]
    same_stream(draws)


@pytest.mark.parametrize("name", ["int64", "int32", "int16", "int8", "uint8", "bool",
                                  "float32", "float64", "float16", "bfloat16"])
def test_random_(name):
    def draws(m, g):
        t = m.empty(300, dtype=dtype(m, name))
        out = [t.random_(generator=g).clone(), t.random_(2, generator=g).clone(),
               t.random_(0, 2, generator=g).clone()]
        if name != "bool":
            out += [t.random_(1, 100, generator=g).clone(), t.random_(100, generator=g).clone(),
                    t.random_(5, None, generator=g).clone(),
                    t.random_(to=50, generator=g).clone()]
        if name in ("int64", "float32", "float64", "bfloat16"):
            out.append(t.random_(-2**63, None, generator=g).clone())
        return out
    same_stream(draws)


@pytest.mark.parametrize("name", ["float32", "float64", "int64", "uint8", "bool", "float16"])
def test_bernoulli(name):
    def draws(m, g):
        p32 = m.arange(50.0) / 49  # (linspace may round differently; this is exact in both)
        p64 = m.arange(50, dtype=m.float64) / 49
        t = m.empty(50, dtype=dtype(m, name))
        out = [t.bernoulli_(0.3, generator=g).clone(), t.bernoulli_(p32, generator=g).clone(),
               t.bernoulli_(p64, generator=g).clone(),
               m.bernoulli(m.ones(20, dtype=dtype(m, name)), 0.7, generator=g)]
        if name.startswith("float"):
            out.append(m.bernoulli(p32.to(dtype(m, name)), generator=g))
        return out
    same_stream(draws)


# ----------------------------------------------------------------------------------------------
# tensor-parameter samplers


@pytest.mark.parametrize("name", ["float32", "float64"])
def test_normal_overloads(name):
    def draws(m, g):
        mean = (m.arange(20, dtype=dtype(m, name)) - 10) / 3
        std = m.arange(1, 21, dtype=dtype(m, name)) / 7
        return [m.normal(mean, std, generator=g), m.normal(mean, 0.5, generator=g),
                m.normal(1.5, std, generator=g), m.normal(0.3, 2.0, (4, 5), generator=g),
                m.normal(mean.reshape(4, 5), std.reshape(4, 5)[:1], generator=g),
                m.normal(0.0, 1.0, (7,), dtype=dtype(m, name), generator=g)]
    same_stream(draws)


@pytest.mark.parametrize("name", ["float32", "float64", "float16"])
def test_multinomial(name):
    def draws(m, g):
        w = m.tensor([[1.0, 0.0, 3.0, 6.0, 2.5], [5.0, 5.0, 0.5, 0.1, 1.0]],
                     dtype=dtype(m, name))
        return [m.multinomial(w, 4, generator=g), m.multinomial(w, 1, generator=g),
                m.multinomial(w, 30, replacement=True, generator=g),
                m.multinomial(w[0], 3, generator=g), m.multinomial(w[1], 5, generator=g),
                m.multinomial(w.t().contiguous().t(), 2, generator=g),
                m.multinomial(m.ones(1000, dtype=dtype(m, name)), 100, generator=g),
                m.multinomial(w[1], 1, replacement=True, generator=g)]
    same_stream(draws)


@pytest.mark.parametrize("n,positive,k", [(5, 1, 3), (200, 2, 3), (200, 2, 10), (64, 5, 64),
                                          (1000, 10, 40)])
def test_multinomial_picks_zero_probabilities_in_torchs_order(n, positive, k):
    """Drawing more than the positive weights without replacement picks zero-probability
    categories too: their order is what torch's top-k sort (libstdc++'s partial_sort or
    nth_element + sort) leaves."""
    def draws(m, g):
        w = m.zeros(3, n)
        w[:, :positive] = 1.0
        w[1] = w[1].flip(0)
        return [m.multinomial(w, k, generator=g), m.multinomial(w[2], k, generator=g)]
    same_stream(draws)


@pytest.mark.parametrize("name", ["float32", "float64"])
def test_poisson(name):
    def draws(m, g):
        rates = m.tensor([0.0, 0.5, 3.0, 9.99, 10.0, 30.0, 1000.0, 1e6], dtype=dtype(m, name))
        return [m.poisson(rates, generator=g), m.poisson(rates.repeat(20), generator=g)]
    same_stream(draws)


# ----------------------------------------------------------------------------------------------
# generator state


def test_seed_matches_torch_words():
    for seed in (0, 1, 42, 2**32 + 7, 2**64 - 1, -5):
        same_stream(lambda m, g: m.randint(0, 2**31, (700,), generator=g), seed=seed)


def test_state_bytes_equal_torch():
    for lib in (torch, ember):
        lib.manual_seed(123)
    for step in range(4):
        e, t = ember.get_rng_state(), torch.get_rng_state()
        np.testing.assert_array_equal(e.numpy(), t.numpy())
        ember.randn(3 + step)
        torch.randn(3 + step)
        ember.rand(300)
        torch.rand(300)


def test_state_from_torch_restores_in_ember_and_back():
    torch.manual_seed(9)
    torch.randn(5)  # leaves a cached normal in the state
    state = torch.get_rng_state()
    ember.set_rng_state(ember.tensor(state.numpy()))
    assert_same([ember.randn(7), ember.rand(3)], [torch.randn(7), torch.rand(3)])
    ember.manual_seed(4)
    ember.randn(1)
    torch.set_rng_state(torch.tensor(ember.get_rng_state().numpy()))
    assert_same([ember.randn(3), ember.randint(5, (6,))], [torch.randn(3), torch.randint(5, (6,))])
    g = torch.Generator().manual_seed(5)
    torch.rand(700, generator=g)  # past the first block of 624 words
    eg = ember.Generator().set_state(ember.tensor(g.get_state().numpy()))
    assert_same(ember.rand(1000, generator=eg), torch.rand(1000, generator=g))


def test_initial_seed_and_fresh_processes():
    for lib in (torch, ember):
        assert lib.Generator().initial_seed() == 67280421310721
        lib.manual_seed(2**40 + 3)
        assert lib.initial_seed() == 2**40 + 3
    import subprocess
    import sys
    code = "import ember; print(ember.initial_seed())"
    seeds = {subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            check=True).stdout for _ in range(2)}
    assert len(seeds) == 2  # each process seeds itself from the operating system


def test_fork_rng_and_clone_state_keep_torch_streams():
    def draws(m, g):
        with m.random.fork_rng():
            m.randn(5)
        twin = m.Generator().manual_seed(3)
        clone = twin.clone_state()
        return [m.randn(3), m.rand(4, generator=twin), m.rand(4, generator=clone)]
    same_stream(draws)
