"""ember.backends, ember.accelerator, the torch.cuda probes without a GPU and the device
properties of tensors, against torch where torch answers the same question here."""
import operator
import warnings

import pytest

import ember

torch = pytest.importorskip("torch")


def test_cudnn_flags_have_torchs_defaults_and_read_back():
    import ember.backends.cudnn as cudnn

    for name in ("enabled", "benchmark", "deterministic", "allow_tf32"):
        assert getattr(cudnn, name) == getattr(torch.backends.cudnn, name), name
    saved = cudnn.benchmark, cudnn.deterministic
    try:
        cudnn.benchmark = True
        cudnn.deterministic = True
        assert ember.backends.cudnn.benchmark and ember.backends.cudnn.deterministic
        with cudnn.flags(enabled=False, benchmark=False):
            assert not cudnn.enabled and not cudnn.benchmark
        assert cudnn.enabled and cudnn.benchmark
    finally:
        cudnn.benchmark, cudnn.deterministic = saved
    assert cudnn.is_available() is False and cudnn.version() is None


def test_cuda_matmul_flags_like_torch():
    matmul, theirs = ember.backends.cuda.matmul, torch.backends.cuda.matmul
    for name in ("allow_tf32", "allow_fp16_reduced_precision_reduction",
                 "allow_bf16_reduced_precision_reduction"):
        assert getattr(matmul, name) == getattr(theirs, name), name
    try:
        matmul.allow_tf32 = True
        assert matmul.allow_tf32 is True and matmul.fp32_precision == "tf32"
    finally:
        matmul.allow_tf32 = False
    for lib in (ember, torch):
        with pytest.raises(AttributeError, match="Unknown attribute not_a_flag"):
            lib.backends.cuda.matmul.not_a_flag = 1


def test_sdp_switches_and_the_deprecated_context():
    cuda = ember.backends.cuda
    for name in ("flash", "mem_efficient", "math", "cudnn"):
        assert getattr(cuda, f"{name}_sdp_enabled")() == \
            getattr(torch.backends.cuda, f"{name}_sdp_enabled")()
    cuda.enable_flash_sdp(False)
    try:
        assert cuda.flash_sdp_enabled() is False
    finally:
        cuda.enable_flash_sdp(True)
    with pytest.warns(FutureWarning, match="sdp_kernel\\(\\)` is deprecated"):
        with cuda.sdp_kernel(enable_flash=False, enable_math=True):
            assert not cuda.flash_sdp_enabled() and cuda.math_sdp_enabled()
    assert cuda.flash_sdp_enabled()


def test_other_backends_answer_like_a_cpu_torch():
    b, tb = ember.backends, torch.backends
    assert b.mps.is_available() is tb.mps.is_available() is False
    assert b.mps.is_built() is tb.mps.is_built() is False
    assert b.cpu.get_cpu_capability() == tb.cpu.get_cpu_capability()
    assert b.opt_einsum.is_available() is False and b.opt_einsum.strategy is None
    assert b.openmp.is_available() is False and b.mkldnn.is_available() is False
    assert isinstance(b.mkl.is_available(), bool)
    with b.mkldnn.flags(enabled=False):
        assert b.mkldnn.enabled is False
    assert b.mkldnn.enabled is True


@pytest.mark.skipif(ember.cuda.is_available(), reason="checks the machine without a GPU")
def test_accelerator_and_cuda_probes_without_a_gpu():
    for lib in (ember, torch):
        acc = lib.accelerator
        assert acc.is_available() is False and acc.current_accelerator() is None
        assert acc.device_count() == 0
        for call in (acc.current_device_index, acc.synchronize, acc.empty_cache):
            with pytest.raises(RuntimeError, match="Cannot access accelerator device when none"):
                call()
        assert lib.cuda.is_available() is False and lib.cuda.device_count() == 0
        assert lib.cuda.memory_allocated() == 0 and lib.cuda.max_memory_allocated() == 0
        assert lib.cuda.is_bf16_supported() is False
        lib.cuda.manual_seed_all(0)
        lib.cuda.empty_cache()
    assert ember.cuda.is_initialized() is False
    with pytest.raises(RuntimeError):
        ember.cuda.get_device_name()


def test_cpu_device_module():
    for lib in (ember, torch):
        assert lib.cpu.is_available() is True and lib.cpu.device_count() == 1
        lib.cpu.synchronize()
        assert lib.cpu.current_device() == "cpu"


@pytest.mark.parametrize("name", ["is_xpu", "is_mps", "is_meta", "is_ipu", "is_vulkan",
                                  "is_mkldnn", "is_mtia", "is_maia", "is_xla",
                                  "is_nested", "is_sparse_csr", "is_quantized", "is_cuda",
                                  "is_cpu"])
def test_tensor_device_properties_match_torch(name):
    assert getattr(ember.ones(2), name) == getattr(torch.ones(2), name)


def _outcome(op, a, b):
    try:
        return op(a, b)
    except TypeError:  # a non-version string against a tuple, in both
        return TypeError


def test_version_compares_like_torchs():
    from torch.torch_version import TorchVersion as Theirs

    from ember.torch_version import TorchVersion as Ours

    samples = ["2.13.0+cpu", "2.0", "2.0.0", "1.13.1", "2.14.0a0", "2.1.0.dev20230101", "abc",
               "2.13.0.post1", "2.13.0rc1"]
    others = ["2.13.0", "2.0", (2, 13), (2, 13, 0), (2, 0), [1, 13], "2.14", "abc", "1.0.dev1",
              "2.13.0rc2"]
    for text in samples:
        for other in others:
            for op in (operator.lt, operator.le, operator.gt, operator.ge, operator.eq,
                       operator.ne):
                assert _outcome(op, Ours(text), other) == _outcome(op, Theirs(text), other), \
                    (text, op, other)
    for lib in (ember, torch):
        with pytest.raises(TypeError):
            lib.__version__ < 3  # noqa: B015 -- the comparison is what is tested
    assert isinstance(ember.__version__, str) and ember.__version__ >= "2.0"
    assert ember.__version__.startswith("2.13.0+ember.")


def test_version_module_has_torchs_fields():
    for name in ("__version__", "cuda", "debug", "git_version", "hip"):
        assert hasattr(ember.version, name) and hasattr(torch.version, name), name
    assert ember.version.cuda is None and ember.version.hip is None
    assert ember.version.__version__ is ember.__version__


def test_deprecation_warnings_do_not_leak(recwarn):
    warnings.simplefilter("always")
    ember.backends.cuda.matmul.allow_tf32  # noqa: B018 -- reading a flag warns about nothing
    assert len(recwarn) == 0
