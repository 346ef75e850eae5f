"""The public wrapper layer: what torch's argument parser adds around every function.

An op module writes each public function once, with torch's parameters and keyword names and
nothing else (`sum(input, dim=None, keepdim=False, *, dtype=None)`). Publishing it --
`ember/__init__.py` for `ember.<name>` and the `linalg`/`special`/`fft` namespaces,
`_tensor_methods.py` for `Tensor.<name>` -- passes it through `function()` or `method()` here,
which add the conventions torch's parser applies to all of its builtin functions:

* `out=`, for the names in OUT (the functions torch 2.13 accepts it for): the result is
  computed as without `out`, then written into `out` with torch's semantics -- an `out` of
  another shape is resized (with torch's deprecation warning if it had elements), its dtype
  is checked against the result's as that function does in torch (see OUT's groups), it may
  not take part in autograd, and the call returns `out` (a tuple of outs for `max(dim)`,
  `sort`, ...). Tensor methods never take `out`, as in torch.
* NumPy-style keyword aliases (torch's "numpy compatibility" names): `axis=` for `dim=` and
  `keepdims=` for `keepdim=` everywhere, and for functions `x=`, `a=`, `x1=` for `input=` and
  `x2=` for `other=` (and `input=` for a function whose first parameter is `self`: a Tensor
  method published as `torch.<name>`). (torch also takes `x2=` for a method's `other`; ember
  does not, to keep `x.add(y)` free of a wrapper frame.)
* module-level in-place functions: `ember.sin_(x)` runs `x.sin_()`, for every name in INPLACE
  that ember has as a method and no op module publishes itself.

A function that needs none of this is published unchanged, so it costs no extra call.

To give a function `out=`: add its name to the right group of OUT (one word) and declare the
function without an `out` parameter; tests/test_calling_conventions.py checks OUT against
torch's own signatures and runs every listed function with `out=` against torch.

Read next: `_tensor_methods.py`, which binds methods and operators.
"""
import functools
import inspect

from .. import _backend
from .. import _dtype as dt
from .._tensor import Tensor
from .._utils import warn
from ..autograd import grad_mode

__all__ = ["OUT", "INPLACE", "function", "method", "install", "write_out"]

# torch's functions that take `out=`, per namespace, grouped by how torch checks out's dtype:
#   cast   any dtype the result can be cast to (torch's elementwise/TensorIterator ops)
#   exact  the result's dtype only
#   dtype  out's dtype is the result's: passed as the `dtype` argument (and a factory's
#          `device` as out's device); a function without a dtype argument casts into out
OUT = {
    "torch": {
        "dtype": """arange bernoulli cumprod cumsum empty eye full linspace logspace nansum
            normal ones prod rand randint randn randperm range sum zeros""",
        "cast": """acos acosh add addcdiv addcmul addr angle arccos arccosh arcsin arcsinh
            arctan arctan2 arctanh asin asinh atan atan2 atanh bitwise_and bitwise_left_shift
            bitwise_or bitwise_right_shift bitwise_xor cat cholesky cholesky_inverse
            cholesky_solve column_stack concat concatenate copysign cos cosh deg2rad diff
            digamma div divide dstack eq erf erfc erfinv exp exp2 expm1 floor_divide fmax fmin
            fmod gcd ge geqrf ger greater greater_equal gt hstack hypot i0 igamma igammac kron
            lcm le lerp less less_equal lgamma log log10 log1p log2 logaddexp logaddexp2
            logical_and logical_not logical_or logical_xor logit logsumexp lt maximum mean
            minimum mul multiply mvlgamma nanmean ne nextafter not_equal orgqr outer polygamma pow
            rad2deg reciprocal remainder row_stack rsqrt sigmoid sin sinc sinh sqrt square
            stack std sub subtract tan tanh threshold true_divide var vstack xlogy""",
        "exact": """abs absolute addbmm addmm addmv all alias_copy amax amin aminmax any argmax
            argmin argsort as_strided_copy baddbmm bitwise_not bmm bucketize ccol_indices_copy
            chain_matmul ceil clamp clamp_max clamp_min clip col_indices_copy complex
            conj_physical cross crow_indices_copy cummax cummin detach_copy diag diagonal_copy
            dot expand_copy fix float_power floor frac frexp frobenius_norm gather hardshrink
            hash_tensor heaviside histc histogram hspmm index_add index_copy index_reduce
            index_select indices_copy inner inverse isin isneginf isposinf kthvalue ldexp
            log_softmax logcumsumexp lu_solve lu_unpack masked_select matmul matrix_power max
            median min mm mode msort multinomial mv nan_to_num nanmedian nanquantile narrow_copy
            neg negative nonzero nonzero_static norm nuclear_norm ormqr permute_copy polar qr
            quantile renorm round row_indices_copy saddmm scatter scatter_add scatter_reduce
            searchsorted select_copy sgn sign signbit slice_copy slice_scatter slogdet softmax
            sort split_copy split_with_sizes_copy squeeze_copy sspaddmm svd t_copy take
            take_along_dim tensordot topk transpose_copy triangular_solve tril triu trunc
            unbind_copy unfold_copy unsqueeze_copy values_copy vdot view_as_complex_copy
            view_as_real_copy view_copy where""",
    },
    "linalg": {
        "cast": "cond eig eigvals householder_product matrix_rank pinv tensorinv tensorsolve",
        "exact": """cholesky cholesky_ex cross det eigh eigvalsh inv inv_ex ldl_factor
            ldl_factor_ex ldl_solve lu lu_factor lu_factor_ex lu_solve matmul matrix_norm
            matrix_power multi_dot norm qr slogdet solve solve_ex solve_triangular svd svdvals
            vecdot vector_norm""",
    },
    "special": {
        "cast": """airy_ai bessel_j0 bessel_j1 bessel_y0 bessel_y1 chebyshev_polynomial_t
            chebyshev_polynomial_u chebyshev_polynomial_v chebyshev_polynomial_w digamma entr
            erf erfc erfcx erfinv exp2 expit expm1 gammainc gammaincc gammaln
            hermite_polynomial_h hermite_polynomial_he i0 i0e i1 i1e laguerre_polynomial_l
            legendre_polynomial_p log1p log_ndtr logit logsumexp modified_bessel_i0
            modified_bessel_i1 modified_bessel_k0 modified_bessel_k1 multigammaln ndtr ndtri
            polygamma psi scaled_modified_bessel_k0 scaled_modified_bessel_k1
            shifted_chebyshev_polynomial_t shifted_chebyshev_polynomial_u
            shifted_chebyshev_polynomial_v shifted_chebyshev_polynomial_w sinc
            spherical_bessel_j0 xlog1py xlogy zeta""",
        "exact": "round",
    },
    "fft": {
        "dtype": "fftfreq rfftfreq",
        "cast": """fft fft2 fftn hfft hfft2 hfftn ifft2 ifftn ihfft2 ihfftn irfft irfft2 irfftn
            rfft rfft2 rfftn""",
        "exact": "ifft ihfft",
    },
    "nn.functional": {"exact": "hardshrink"},  # F.hardshrink is torch.hardshrink in torch
}
_POLICY = {(namespace, name): policy for namespace, groups in OUT.items()
           for policy, names in groups.items() for name in names.split()}

# the functions whose out of another size torch resizes without its deprecation warning
QUIET_RESIZE = {
    "torch": """addbmm arange bernoulli empty eye full linspace logspace multinomial narrow_copy
        normal ones rand randint randn randperm range zeros""",
    "fft": "fftfreq rfftfreq",
}
_QUIET = {(namespace, name) for namespace, names in QUIET_RESIZE.items()
          for name in names.split()}

# the functions that copy into outs of another shape (broadcasting, as copy_) and never resize
_NEVER_RESIZE = {("torch", "split_copy")}
# the functions whose out is a list of tensors: torch returns None from their out= form
_RETURN_NOTHING = {("torch", n) for n in "split_copy split_with_sizes_copy unbind_copy".split()}

# torch's module-level in-place functions (`torch.sin_(x)`), each the Tensor method of the name
INPLACE = """abs_ acos_ acosh_ addmv_ arccos_ arccosh_ arcsin_ arcsinh_ arctan_ arctanh_
    as_strided_ asin_ asinh_ atan_ atanh_ ceil_ clamp_ clamp_max_ clamp_min_ clip_
    conj_physical_ cos_ cosh_ deg2rad_ detach_ erf_ erfc_ exp2_ exp_ expm1_ fill_ fix_ floor_
    frac_ gcd_ i0_ index_put_ lcm_ ldexp_ log10_ log1p_ log2_ log_ logit_ nan_to_num_ neg_
    negative_ rad2deg_ reciprocal_ relu_ resize_as_ resize_as_sparse_ round_ rsqrt_ sigmoid_
    sin_ sinc_ sinh_ sqrt_ square_ tan_ tanh_ trunc_ xlogy_ zero_""".split()

# torch's NumPy-compatible keyword names: alias -> the parameter it stands for
_METHOD_ALIASES = {"axis": "dim", "keepdims": "keepdim"}
# (and `input=` for the `self` of a Tensor method published as a function, torch.detach)
_FUNCTION_ALIASES = {**_METHOD_ALIASES, "x": "input", "a": "input", "x1": "input",
                     "x2": "other", "input": "self"}
# torch takes an int-list parameter spread out (`x.view(2, 3)`) or by name as one sequence
# (`x.view(size=(2, 3))`); ember's `*size`-style parameters of these names take both too
_SEQUENCE_VARARGS = ("size", "shape", "dims", "repeats")


# ----------------------------------------------------------------------------------------------
# publishing


def function(fn, name, namespace="torch"):
    """`fn` as `ember.<name>` (or `ember.<namespace>.<name>`): with `out=` if torch takes it
    there, torch's keyword aliases, and sequences by name for `*size`-style parameters."""
    key = (namespace, name)
    resize = "quiet" if key in _QUIET else "never" if key in _NEVER_RESIZE else "warn"
    return _wrap(fn, name, _POLICY.get(key), _FUNCTION_ALIASES, resize, key in _RETURN_NOTHING)


def method(fn, name):
    """`fn` as `Tensor.<name>`: with the `axis=`/`keepdims=` aliases where it has dim/keepdim,
    and sequences by name for `*size`-style parameters."""
    return _wrap(fn, name, None, _METHOD_ALIASES)


def install(namespace, name="torch", aliases=True):
    """Publish a module's functions (its `vars()`) with torch's conventions, in place; for the
    top-level namespace also add the module-level in-place functions. `aliases=False` for a
    namespace of Python functions in torch (nn.functional), which only takes out= where OUT
    lists it."""
    for key, value in list(namespace.items()):
        if key.startswith("_") or not callable(value) or isinstance(value, type):
            continue
        if aliases or (name, key) in _POLICY:
            namespace[key] = function(value, key, name)
    if name == "torch":
        for key in INPLACE:
            if key not in namespace and hasattr(Tensor, key):
                namespace[key] = _inplace_function(key)


def _parameters(fn):
    try:
        return inspect.signature(fn).parameters
    except (TypeError, ValueError):  # a builtin or an object without a signature
        return {}


def _aliases(params, table):
    return {alias: target for alias, target in table.items()
            if target in params and alias not in params}


def _spread(params):
    """The name of a `*size`-style parameter, or None."""
    return next((p.name for p in params.values() if p.kind is p.VAR_POSITIONAL and
                 p.name in _SEQUENCE_VARARGS), None)


def _wrap(fn, name, policy, alias_table, resize="warn", returns_nothing=False):
    fn = getattr(fn, "_public_of", fn)  # published before (under another name or namespace)
    params = _parameters(fn)
    aliases = _aliases(params, alias_table)
    spread = _spread(params)
    if policy is None and not aliases and spread is None:
        return fn
    fills = [p for p in ("dtype", "device") if p in params] if policy == "dtype" else []

    @functools.wraps(fn)
    def public(*args, **kwargs):
        if not kwargs:  # `x.sum()`, `x.sum(1)`: no empty dict to unpack, ~0.3k instructions
            return fn(*args)
        if aliases:
            _translate(kwargs, aliases, name)
        if spread in kwargs:
            args = args + (kwargs.pop(spread),)
        out = kwargs.pop("out", None) if policy is not None else None
        if out is not None:
            written = _call_into(fn, args, kwargs, out, name, policy, fills, resize)
            return None if returns_nothing else written
        return fn(*args, **kwargs)

    public._public_of = fn
    if policy is not None:
        public.__signature__ = _with_out(fn)
    return public


def _translate(kwargs, aliases, name):
    for alias in aliases.keys() & kwargs.keys():
        target = aliases[alias]
        if target in kwargs:
            raise TypeError(f"{name}() got multiple values for argument '{target}' (as "
                            f"'{target}' and as '{alias}')")
        kwargs[target] = kwargs.pop(alias)


def _with_out(fn):
    """fn's signature with torch's keyword-only `out=None` added."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return None
    params = list(sig.parameters.values())
    if "out" in sig.parameters:
        return sig
    keyword = inspect.Parameter("out", inspect.Parameter.KEYWORD_ONLY, default=None)
    at = len(params)
    if params and params[-1].kind is inspect.Parameter.VAR_KEYWORD:
        at -= 1  # keyword-only parameters come before **kwargs
    return sig.replace(parameters=params[:at] + [keyword] + params[at:])


def _inplace_function(name):
    method_ = getattr(Tensor, name)

    def inplace(input, *args, **kwargs):
        return method_(input, *args, **kwargs)

    inplace.__name__ = inplace.__qualname__ = name
    inplace.__doc__ = f"torch.{name}(input, ...): `input.{name}(...)`, in place; returns input."
    return inplace


# ----------------------------------------------------------------------------------------------
# writing into out


def _call_into(fn, args, kwargs, out, name, policy, fills, resize):
    if fills:  # out says the result's dtype (and a factory's device)
        _check_tensor(out, name)
        _fill_from_out(kwargs, out, fills, name)
    return write_out(out, fn(*args, **kwargs), name, policy, resize)


def _fill_from_out(kwargs, out, fills, name):
    for key in fills:
        given = kwargs.get(key)
        if given is None:
            kwargs[key] = out.dtype if key == "dtype" else out.device
        elif key == "dtype" and given is not out.dtype and "device" in fills:
            raise RuntimeError(f"dtype {dt.scalar_name(given)} does not match dtype of out "
                               f"parameter ({dt.scalar_name(out.dtype)})")


def write_out(out, result, name, policy="cast", resize="warn"):
    """torch's `out=`: write `result` (a tensor, or a tuple of them) into `out` and return out.
    `policy` says which dtypes out may have (see OUT); an out of another shape is resized with
    torch's warning (`resize="warn"`), without it ("quiet"), or never ("never": copied into,
    broadcasting)."""
    if out is None:
        return result
    if not isinstance(result, (tuple, list)):
        _check_tensor(out, name)
        return _write(out, result, name, policy, resize)
    if not isinstance(out, (tuple, list)) or len(out) != len(result):
        raise TypeError(f"{name}(): argument 'out' must be tuple of {len(result)} Tensors, not "
                        f"{_describe(out)}")
    written = [_write(_check_tensor(o, name), r, name, policy, resize)
               for o, r in zip(out, result)]
    return type(result)(*written) if hasattr(result, "_fields") else type(result)(written)


def _check_tensor(out, name):
    if not isinstance(out, Tensor):
        raise TypeError(f"{name}(): argument 'out' must be Tensor, not {_describe(out)}")
    return out


def _describe(x):
    return type(x).__name__ if not isinstance(x, (tuple, list)) or not x else \
        f"{type(x).__name__} of {len(x)}"


def _write(out, result, name, policy, resize):
    if grad_mode.is_grad_enabled() and (result.requires_grad or out.requires_grad):
        raise RuntimeError(f"{name}(): functions with out=... arguments don't support automatic "
                           "differentiation, but one of the arguments requires grad.")
    if out.device != result.device:
        raise RuntimeError(f"Expected out tensor to have device {result.device}, but got "
                           f"{out.device} instead")
    if policy == "exact" and out.dtype is not result.dtype:
        raise RuntimeError(f"Expected out tensor to have dtype {_c_name(result.dtype)}, but got "
                           f"{_c_name(out.dtype)} instead")
    if policy == "cast" and not dt.can_cast(result.dtype, out.dtype):
        raise RuntimeError(f"result type {dt.scalar_name(result.dtype)} can't be cast to the "
                           f"desired output type {dt.scalar_name(out.dtype)}")
    if out.shape != result.shape and resize != "never":
        _resize(out, result.shape, warns=resize == "warn")
    with grad_mode.no_grad():
        out.copy_(result)
    return out


def _resize(out, shape, warns):
    """Give `out` the result's shape (new memory), warning as torch does when it had elements."""
    if out._base is not None:
        raise NotImplementedError(f"out= tensor of shape {list(out.shape)} needs shape "
                                  f"{list(shape)}: ember does not resize a view")
    if out.numel() and warns:
        warn(f"An output with one or more elements was resized since it had shape "
             f"{list(out.shape)}, which does not match the required output shape "
             f"{list(shape)}. This behavior is deprecated, and in a future PyTorch release "
             "outputs will not be resized unless they have zero elements. You can explicitly "
             "reuse an out tensor t by resizing it, inplace, to zero "
             "elements with t.resize_(0).")
    xp = _backend.namespace(out.device)
    out._data = xp.empty(tuple(shape), out._data.dtype)


# the C++ type names torch's dtype messages use
_C_NAMES = {"float32": "float", "float64": "double", "float16": "c10::Half",
            "bfloat16": "c10::BFloat16", "int64": "long int", "int32": "int",
            "int16": "short int", "int8": "signed char", "uint8": "unsigned char", "bool": "bool"}


def _c_name(dtype):
    return _C_NAMES.get(dtype.name, dtype.name)
