"""Namespace coverage: every public name torch 2.13 has, ember has too -- or says why not.

For each namespace (`torch`, `Tensor`, `nn`, `nn.functional`, `linalg`, `autograd`,
`utils.data`, `optim`) the wanted names are torch's `dir()` minus `_`-names, minus what a rule
drops (a module of the standard library or NumPy re-exported by accident, `typing` helpers),
minus two reviewed lists:

    EXCLUDED   {name: reason}  names ember leaves out on purpose (quantization, TorchScript and
               dispatcher internals, backend-specific kernels, deprecated datapipes, ...)
    PENDING    {name: owner}   names another branch is adding; the integrator deletes entries
               as branches merge. A PENDING name that ember already has fails the test, so the
               list cannot go stale.

A name ember has must be the same kind of thing as torch's: a module for a module, a class for
a class, something callable for something callable (a stub that raises does not count, but the
test cannot see inside a callable: the tests of each family check behaviour against torch).

`python -m tests.test_namespace` prints, per namespace, how many of torch's names ember has.
"""
import functools
import inspect
import json
import os
import subprocess
import sys
import types

import pytest

import ember
import ember.utils.data

torch = pytest.importorskip("torch")


def _space(lib, path):
    """lib.<path> for a dotted path ("nn.functional")."""
    obj = lib
    for part in path.split("."):
        obj = getattr(obj, part)
    return obj


NAMESPACES = ("torch", "Tensor", "nn", "nn.functional", "linalg", "autograd", "utils.data",
              "optim")


def _of(lib, namespace):
    return lib if namespace == "torch" else _space(lib, namespace)


def _by_rule(value):
    """Names torch has only because its modules import them: standard-library or NumPy
    modules (`torch.os`, `F.np`) and `typing` helpers (`F.Optional`, `autograd.cast`)."""
    if isinstance(value, types.ModuleType):
        return not value.__name__.startswith("torch")
    return getattr(value, "__module__", None) in ("typing", "typing_extensions",
                                                   "collections.abc")


def _group(reason, names):
    return dict.fromkeys(names.split(), reason)


# ----------------------------------------------------------------------------------------------
# EXCLUDED: left out on purpose, one reason per name

_JIT = "TorchScript/JIT internals"
_QUANT = "quantization (out of scope)"
_BACKEND = "backend-specific kernel (cuDNN, MIOpen, oneDNN, FBGEMM)"
_DISPATCH = "dispatcher/C++ internals never called by user programs"
_DOC = "a docstring fragment, not an API"

EXCLUDED = {
    "torch": {
        **_group(_JIT, """
            AliasDb AnyType Argument ArgumentSpec AwaitType BenchmarkConfig
            BenchmarkExecutionStats Block BoolType BufferDict CallStack Capsule ClassType Code
            CompilationUnit CompleteArgumentSpec ComplexType ConcreteModuleType
            ConcreteModuleTypeBuilder DeepCopyMemoTable DeserializationStorageContext
            DeviceObjType DictType EnumType ErrorReport ExecutionPlan FileCheck FloatType
            FunctionSchema FutureType Gradient Graph GraphExecutorState IODescriptor
            InferredType IntType InterfaceType JITException ListType LiteScriptModule
            LockingLogger LoggerBase ModuleDict Node NoneType NoopLogger NumberType
            OperatorInfo OptionalType ParameterDict PyObjectType RRefType ScriptClass
            ScriptClassFunction ScriptDict ScriptDictIterator ScriptDictKeyIterator
            ScriptFunction ScriptList ScriptListIterator ScriptMethod ScriptModule
            ScriptModuleSerializer ScriptObject ScriptObjectProperty
            SerializationStorageContext StaticModule StreamObjType StringType SymBoolType
            SymIntType TensorType ThroughputBenchmark TracingState TupleType Type UnionType
            Use Value Future futures fork wait classes import_ir_module
            import_ir_module_from_buffer merge_type_from_type_comment parse_ir parse_schema
            parse_type_comment unify_type_list"""),
        **_group("symbolic shapes of torch.compile/export tracing", """
            SymBool SymFloat SymInt sym_constrain_range sym_constrain_range_for_size
            sym_fresh_size"""),
        **_group(_QUANT, """
            QInt32Storage QInt8Storage QUInt2x4Storage QUInt4x2Storage QUInt8Storage ao
            choose_qparams_optimized dequantize empty_quantized
            fake_quantize_per_channel_affine fake_quantize_per_tensor_affine
            fbgemm_linear_fp16_weight fbgemm_linear_fp16_weight_fp32_activation
            fbgemm_linear_int8_weight fbgemm_linear_int8_weight_fp32_activation
            fbgemm_linear_quantize_weight fbgemm_pack_gemm_matrix_fp16
            fbgemm_pack_quantized_matrix fused_moving_avg_obs_fake_quant int_repr
            per_channel_affine per_channel_affine_float_qparams per_channel_symmetric
            per_tensor_affine per_tensor_symmetric q_per_channel_axis q_per_channel_scales
            q_per_channel_zero_points q_scale q_zero_point qint32 qint8 qscheme quantization
            quantize_per_channel quantize_per_tensor quantize_per_tensor_dynamic
            quantized_batch_norm quantized_gru quantized_gru_cell quantized_lstm
            quantized_lstm_cell quantized_max_pool1d quantized_max_pool2d
            quantized_max_pool3d quantized_rnn_relu_cell quantized_rnn_tanh_cell quint2x4
            quint4x2 quint8"""),
        **_group("shell dtype with no operators in torch (bit-packed or sub-byte)", """
            bit bits16 bits1x8 bits2x4 bits4x2 bits8 int1 int2 int3 int4 int5 int6 int7 uint1
            uint2 uint3 uint4 uint5 uint6 uint7 float4_e2m1fn_x2"""),
        **_group(_BACKEND, """
            cudnn_affine_grid_generator cudnn_batch_norm cudnn_convolution
            cudnn_convolution_add_relu cudnn_convolution_relu cudnn_convolution_transpose
            cudnn_grid_sampler cudnn_is_acceptable miopen_batch_norm miopen_convolution
            miopen_convolution_add_relu miopen_convolution_relu miopen_convolution_transpose
            miopen_ctc_loss miopen_depthwise_convolution miopen_rnn mkldnn_adaptive_avg_pool2d
            mkldnn_convolution mkldnn_linear_backward_weights mkldnn_max_pool2d
            mkldnn_max_pool3d mkldnn_rnn_layer profiler_allow_cudagraph_cupti_lazy_reinit_cuda12
            is_vulkan_available"""),
        **_group("SyncBatchNorm's internal kernels", """
            batch_norm_backward_elemt batch_norm_backward_reduce batch_norm_elemt
            batch_norm_gather_stats batch_norm_gather_stats_with_counts batch_norm_stats
            batch_norm_update_stats"""),
        **_group(_DISPATCH, """
            DispatchKey DispatchKeySet ExcludeDispatchKeyGuard Tag PRIVATE_OPS FatalError
            USE_GLOBAL_DEPS USE_RTLD_GLOBAL_WITH_LIBTORCH PyTorchFileReader PyTorchFileWriter
            StorageBase cpp classproperty get_file_path prepare_multiprocessing_environment
            compiled_with_cxx11_abi"""),
        "TYPE_CHECKING": "typing constant",
        "types": "typing aliases only (torch.types)",
        "torch": "the torch module re-exporting itself",
        **_group("torch.monitor: C++ event counters for production logging", """
            monitor AggregationType AVG SUM"""),
        **_group("nested (jagged) tensors: a prototype layout", "nested jagged"),
        "masked": "MaskedTensor: a prototype",
        "slice_inverse": "functionalization's view replay, never called by user programs",
        "embedding_bag": "ATen's form returns backward bookkeeping (offset2bag, bag_size, "
                         "max_indices); programs call F.embedding_bag",
        "native_norm": "a sparse-tensor kernel torch 2.13 has no CPU implementation of",
        "package": "torch.package: model archiving with code, a separate tool",
    },
    "Tensor": {
        **_group(_QUANT, """
            dequantize int_repr q_per_channel_axis q_per_channel_scales
            q_per_channel_zero_points q_scale q_zero_point qscheme"""),
        "to_mkldnn": _BACKEND,
        "to_padded_tensor": "nested (jagged) tensors: a prototype layout",
        "index": "functorch.dim first-class dimensions (a separate prototype)",
        "slice_inverse": "functionalization's view replay, never called by user programs",
    },
    "nn": {
        **_group(_QUANT, "intrinsic qat quantizable quantized"),
        "common_types": "typing aliases only (torch.nn.common_types)",
    },
    "nn.functional": {
        **_group(_JIT, "BroadcastingList1 BroadcastingList2 BroadcastingList3 boolean_dispatch"),
        **_group(_DOC, "reproducibility_notes sparse_support_notes tf32_notes"),
        "assert_int_or_pair": "a private helper of F.unfold/F.fold",
        "DType": "typing alias (= int)",
        "TYPE_CHECKING": "typing constant",
        "torch": "the torch module re-exported",
        **_group("fp8 scaled GEMM for CUDA (backend-specific kernels)", """
            scaled_mm scaled_grouped_mm ScalingType SwizzleType"""),
    },
    "linalg": {
        "common_notes": _DOC,
    },
    "autograd": {
        "torch": "the torch module re-exported",
    },
    "utils.data": _group("DataPipes: deprecated in torch, to be removed", """
        DFIterDataPipe DataChunk IterDataPipe MapDataPipe argument_validation datapipes
        functional_datapipe graph graph_settings guaranteed_datapipes_determinism
        non_deterministic runtime_validation runtime_validation_disabled"""),
    "optim": {},
}

# ----------------------------------------------------------------------------------------------
# PENDING: owned by another branch (the integrator deletes entries as branches merge)

_COMPLEX = "complex"
_COMPAT = "compat"
_DIST = "dist"
_SPARSE = "sparse"
_TODO = "names-ops (not done)"

PENDING = {
    "torch": {
        **_group(_COMPLEX, "view_as_complex_copy view_as_real_copy windows has_spectral"),
        **_group(_COMPAT, """
            get_autocast_ipu_dtype get_autocast_xla_dtype is_autocast_ipu_enabled
            is_autocast_xla_enabled set_autocast_ipu_dtype set_autocast_ipu_enabled
            set_autocast_xla_dtype set_autocast_xla_enabled fx mtia export library overrides
            AcceleratorError OutOfMemoryError DisableTorchFunction DisableTorchFunctionSubclass"""),
        **_group(_SPARSE, """
            sparse_bsc sparse_bsc_tensor sparse_bsr sparse_bsr_tensor sparse_compressed_tensor
            sparse_csc sparse_csc_tensor sparse_csr sparse_csr_tensor dsmm hsmm hspmm saddmm smm
            sspaddmm ccol_indices_copy col_indices_copy crow_indices_copy indices_copy
            row_indices_copy values_copy resize_as_sparse_"""),
        **_group(_TODO, "lobpcg"),
    },
    "Tensor": {
        "chalf": _COMPLEX,
        **_group(_COMPAT, "ipu mtia record_stream xpu"),
        **_group(_SPARSE, """
            ccol_indices col_indices crow_indices resize_as_sparse_ row_indices smm sparse_resize_
            sparse_resize_and_clear_ sspaddmm to_sparse_bsc to_sparse_bsr to_sparse_csc
            to_sparse_csr"""),
    },
    "nn": {
    },
    "nn.functional": {
        **_group(_COMPAT, """
            handle_torch_function has_torch_function has_torch_function_unary
            has_torch_function_variadic"""),
    },
    "linalg": {},
    "autograd": {
        **_group(_COMPAT, "handle_torch_function has_torch_function is_tensor_like"),
        "SavedTensor": _TODO,  # needs saved-tensor hooks in the engine
    },
    "utils.data": {},
    "optim": {
        "SparseAdam": _SPARSE,
    },
}


# ----------------------------------------------------------------------------------------------
# the checks


def _names_in(namespace):
    space = _of(torch, namespace)
    return sorted(n for n in dir(space) if not n.startswith("_") and
                  not _by_rule(getattr(space, n)))


@functools.lru_cache(maxsize=None)
def _fresh_torch_names():
    """{namespace: names} as a fresh interpreter sees torch: importing torch's submodules
    (torch.onnx, ...), as other tests do, adds them to dir(torch), which would make these
    lists depend on the order tests run in."""
    code = ("import json, tests.test_namespace as t; "
            "print(json.dumps({n: t._names_in(n) for n in t.NAMESPACES}))")
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    found = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           check=True, cwd=root)
    return json.loads(found.stdout.splitlines()[-1])


def torch_names(namespace):
    """torch's public names in `namespace` that ember is expected to have or account for."""
    return _fresh_torch_names()[namespace]


def wanted(namespace):
    """torch's names minus EXCLUDED and PENDING."""
    skip = EXCLUDED[namespace].keys() | PENDING[namespace].keys()
    return [n for n in torch_names(namespace) if n not in skip]


def _kind(value):
    if isinstance(value, types.ModuleType):
        return "module"
    if inspect.isclass(value):
        return "class"
    if callable(value):
        return "callable"
    return "value"


def _class_attribute(cls, name):
    """A Tensor attribute as the class holds it (a property is a value on instances)."""
    value = inspect.getattr_static(cls, name)
    return "value" if isinstance(value, property) or type(value).__name__ == \
        "getset_descriptor" else _kind(getattr(cls, name))


def kind_of(namespace, lib, name):
    space = _of(lib, namespace)
    if namespace == "Tensor":
        return _class_attribute(space, name)
    return _kind(getattr(space, name))


def coverage(namespace):
    """(how many of torch's public names ember has, how many torch has)."""
    names = torch_names(namespace)
    space = _of(ember, namespace)
    return sum(hasattr(space, n) for n in names), len(names)


@pytest.mark.parametrize("namespace", NAMESPACES)
def test_ember_has_every_wanted_name(namespace):
    space = _of(ember, namespace)
    missing = [n for n in wanted(namespace) if not hasattr(space, n)]
    have, total = coverage(namespace)
    print(f"{namespace}: ember has {have} of torch's {total} public names")
    assert not missing, f"ember.{namespace} lacks {len(missing)} of torch's names: {missing}"


@pytest.mark.parametrize("namespace", NAMESPACES)
def test_names_are_the_same_kind_of_thing(namespace):
    """A module for a module, a class for a class, a callable for a callable."""
    space = _of(ember, namespace)
    wrong = [(n, kind_of(namespace, ember, n), kind_of(namespace, torch, n))
             for n in torch_names(namespace) if hasattr(space, n)
             and kind_of(namespace, ember, n) != kind_of(namespace, torch, n)]
    assert not wrong, f"(name, ember's kind, torch's kind): {wrong}"


@pytest.mark.parametrize("namespace", NAMESPACES)
def test_pending_names_are_still_missing(namespace):
    """Once a branch adds a PENDING name, its entry must go (so the list stays true)."""
    space = _of(ember, namespace)
    present = sorted(n for n in PENDING[namespace] if hasattr(space, n))
    assert not present, f"ember.{namespace} has these PENDING names now; delete them from " \
                        f"PENDING: {present}"


@pytest.mark.parametrize("namespace", NAMESPACES)
def test_lists_name_only_torch_names(namespace):
    """Every EXCLUDED or PENDING entry is a public torch name the rule did not already drop,
    and no name is in both lists."""
    names = set(torch_names(namespace))
    listed = EXCLUDED[namespace].keys() | PENDING[namespace].keys()
    assert not sorted(listed - names), "not torch names (or dropped by the rule)"
    assert not sorted(EXCLUDED[namespace].keys() & PENDING[namespace].keys())


def main():
    for namespace in NAMESPACES:
        have, total = coverage(namespace)
        print(f"{namespace:15s} ember has {have:4d} of torch's {total:4d} public names")


if __name__ == "__main__":
    sys.exit(main())
