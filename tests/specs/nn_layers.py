"""Rows for ember/ops/nn/activation.py, norm.py and embedding.py (behaviour beyond the table is
in tests/test_nn_activation.py, test_nn_norm.py, test_nn_dropout.py, test_nn_embedding.py)."""
from ._spec import I, Spec, T


def F(m):
    return m.nn.functional


def _unary(name, fn, low=-2.0, high=2.0, ops=None, **kw):
    """A row over the usual cases: 2-d, 0-d, empty, transposed, float64 and float16."""
    cases = [(T(3, 4, low=low, high=high),), (T(low=low, high=high),), (T(0, 3),),
             (T(4, 3, low=low, high=high, t=True),), (T(2, 3, dtype="float64", low=low,
                                                        high=high),)]
    return Spec(name, fn, cases, ops=ops or [name], **kw)


def _double_backward(m, fn, *inputs):
    """d(sum(grad^2))-style check: the first input's gradient with create_graph=True, so the
    rule itself runs as a forward and is differentiated again."""
    out = fn(m, *inputs)
    (g,) = m.autograd.grad((out * out).sum(), inputs[0], create_graph=True)
    return g


SPECS = [
    _unary("hardtanh", lambda m, x: F(m).hardtanh(x, -1.2, 0.7),
           ops=["hardtanh", "hardtanh_backward"]),
    _unary("relu6", lambda m, x: F(m).relu6(x * 4), ops=["hardtanh"]),
    Spec("hardtanh_int", lambda m, x: F(m).hardtanh(x, -1.5, 2.5), [(I(3, 4, low=-4, high=4),)],
         ops=["hardtanh"]),
    _unary("threshold", lambda m, x: F(m).threshold(x, 0.3, -2.0)),
    Spec("threshold_int", lambda m, x: F(m).threshold(x, 0.5, 7), [(I(5, low=-3, high=3),)],
         ops=["threshold"]),
    _unary("leaky_relu", lambda m, x: F(m).leaky_relu(x, 0.2),
           ops=["leaky_relu", "leaky_relu_backward"]),
    _unary("elu", lambda m, x: F(m).elu(x, 1.5), ops=["elu", "elu_backward"]),
    _unary("selu", lambda m, x: F(m).selu(x), ops=["elu"]),
    _unary("celu", lambda m, x: F(m).celu(x, 0.7)),
    _unary("softplus", lambda m, x: F(m).softplus(x, 2.0, 3.0),
           ops=["softplus", "softplus_backward"]),
    _unary("softshrink", lambda m, x: F(m).softshrink(x, 0.4),
           ops=["softshrink", "softshrink_backward"]),
    _unary("hardshrink", lambda m, x: F(m).hardshrink(x, 0.4),
           ops=["hardshrink", "hardshrink_backward"]),
    _unary("hardsigmoid", lambda m, x: F(m).hardsigmoid(x), low=-5, high=5,
           ops=["hardsigmoid", "hardsigmoid_backward"]),
    _unary("hardswish", lambda m, x: F(m).hardswish(x), low=-5, high=5,
           ops=["hardswish", "hardswish_backward"]),
    _unary("silu", lambda m, x: F(m).silu(x), low=-6, high=6, ops=["silu", "silu_backward"]),
    _unary("mish", lambda m, x: F(m).mish(x), low=-6, high=6, ops=["mish", "mish_backward"]),
    _unary("log_sigmoid", lambda m, x: F(m).logsigmoid(x), low=-30, high=30,
           ops=["log_sigmoid", "log_sigmoid_backward"]),
    _unary("gelu", lambda m, x: F(m).gelu(x), low=-5, high=5, ops=["gelu", "gelu_backward"]),
    _unary("gelu_tanh", lambda m, x: F(m).gelu(x, approximate="tanh"), low=-5, high=5,
           ops=["gelu"]),
    Spec("activations_float16", lambda m, x: [F(m).gelu(x), F(m).silu(x), F(m).elu(x),
                                              F(m).softplus(x), F(m).mish(x)],
         [(T(4, 5, dtype="float16"),)], ops=["gelu", "silu", "elu", "softplus", "mish"],
         grad=False),
    Spec("prelu", lambda m, x, w: F(m).prelu(x, w),
         [(T(2, 3, 4), T(3)), (T(2, 3, 4), T(1)), (T(5), T(1)), (T(), T(1)),
          (T(3, 2, t=True), T(2)), (T(0, 3), T(3))]),
    Spec("glu", lambda m, x: F(m).glu(x, 1), [(T(2, 6, 3),), (T(3, 4, t=True),), (T(0, 4),)]),
    Spec("softmax", lambda m, x: F(m).softmax(x, -1),
         [(T(3, 5),), (T(),), (T(0, 3),), (T(4, 3, t=True),), (T(2, 3, dtype="float64"),),
          (T(4, 3, dtype="float16"),), (T(2, 3, low=-80, high=90),)],
         ops=["softmax", "softmax_backward"]),
    Spec("softmax_dim0", lambda m, x: F(m).softmax(x, 0), [(T(3, 5),), (T(2, 3, 4),)],
         ops=["softmax"]),
    Spec("softmax_dtype", lambda m, x: F(m).softmax(x, 1, dtype=m.float64), [(T(3, 5),)],
         ops=["softmax"]),
    Spec("softmin", lambda m, x: F(m).softmin(x, 1), [(T(3, 5),)], ops=["softmax"]),
    Spec("log_softmax", lambda m, x: F(m).log_softmax(x, -1),
         [(T(3, 5),), (T(),), (T(0, 3),), (T(4, 3, t=True),), (T(2, 3, dtype="float64"),),
          (T(2, 3, low=-80, high=90),)], ops=["log_softmax", "log_softmax_backward"]),
    Spec("log_softmax_dim1", lambda m, x: m.log_softmax(x, 1), [(T(2, 3, 4),)],
         ops=["log_softmax"]),
    Spec("softmax_double_backward", lambda m, x: _double_backward(
        m, lambda m, x: F(m).softmax(x, 1) * m.arange(4.0), x), [(T(3, 4),)],
         ops=["softmax"]),
    Spec("log_softmax_double_backward", lambda m, x: _double_backward(
        m, lambda m, x: F(m).log_softmax(x, 1), x), [(T(3, 4),)], ops=["log_softmax"]),
    Spec("layer_norm", lambda m, x, w, b: F(m).layer_norm(x, (4,), w, b),
         [(T(3, 4), T(4), T(4)), (T(2, 3, 4, t=True), T(4), T(4)), (T(0, 4), T(4), T(4)),
          (T(2, 4, dtype="float64"), T(4, dtype="float64"), T(4, dtype="float64"))],
         ops=["layer_norm", "layer_norm_backward"]),
    Spec("layer_norm_2d_no_affine", lambda m, x: F(m).layer_norm(x, (3, 4)),
         [(T(2, 3, 4),), (T(3, 4),)], ops=["layer_norm"]),
    Spec("layer_norm_double_backward", lambda m, x, w: _double_backward(
        m, lambda m, x, w: F(m).layer_norm(x, (4,), w) * m.arange(4.0), x, w),
         [(T(3, 4, dtype="float64"), T(4, dtype="float64"))], ops=["layer_norm"]),
    Spec("group_norm", lambda m, x, w, b: F(m).group_norm(x, 2, w, b),
         [(T(2, 4, 3), T(4), T(4)), (T(3, 6, 2, 2), T(6), T(6)), (T(2, 4), T(4), T(4))],
         ops=["group_norm", "group_norm_backward"]),
    Spec("group_norm_no_affine", lambda m, x: F(m).group_norm(x, 3), [(T(2, 6, 5),)],
         ops=["group_norm"]),
    Spec("batch_norm_train", lambda m, x, w, b: F(m).batch_norm(x, None, None, w, b, True),
         [(T(4, 3), T(3), T(3)), (T(2, 3, 4, 2), T(3), T(3)), (T(3, 2, 5, t=True), T(2),
                                                             T(2))],
         ops=["batch_norm", "batch_norm_backward"]),
    Spec("batch_norm_eval", lambda m, x, rm, rv, w, b: F(m).batch_norm(
        x, rm.detach(), rv.detach().abs() + 0.5, w, b, False),
         [(T(4, 3, 2), T(3), T(3), T(3), T(3))], ops=["batch_norm"],
         gradcheck=False),  # the running statistics are detached: no gradient by design
    Spec("batch_norm_double_backward", lambda m, x, w: _double_backward(
        m, lambda m, x, w: F(m).batch_norm(x, None, None, w, None, True) * m.arange(3.0), x, w),
         [(T(4, 3, dtype="float64"), T(3, dtype="float64"))], ops=["batch_norm"]),
    Spec("instance_norm", lambda m, x, w, b: F(m).instance_norm(x, weight=w, bias=b),
         [(T(2, 3, 5), T(3), T(3))], ops=["batch_norm"]),
    Spec("rms_norm", lambda m, x, w: F(m).rms_norm(x, (4,), w, 1e-5),
         [(T(3, 4), T(4)), (T(2, 3, 4, t=True), T(4)), (T(2, 4, dtype="float64"),
                                                       T(4, dtype="float64"))],
         ops=["rms_norm", "rms_norm_backward"]),
    Spec("rms_norm_2d_default_eps", lambda m, x: F(m).rms_norm(x, (2, 3)), [(T(4, 2, 3),)],
         ops=["rms_norm"]),
    Spec("local_response_norm", lambda m, x: F(m).local_response_norm(x, 3, 0.1, 0.6, 1.5),
         [(T(2, 5, 4),), (T(1, 4, 3, 3),), (T(1, 3, 2, 2, 2),)], ops=[]),
    Spec("embedding", lambda m, w, i: F(m).embedding(i, w),
         [(T(5, 3), I(4, 2)), (T(5, 3), I(7)), (T(5, 3), I()), (T(5, 3), I(0, 2)),
          (T(3, 5, t=True), I(6, high=3))]),
    Spec("embedding_options", lambda m, w, i: F(m).embedding(i, w, padding_idx=1,
                                                             scale_grad_by_freq=True),
         [(T(5, 3), I(4, 3)), (T(5, 3, dtype="float64"), I(9))], ops=["embedding"],
         gradcheck=False),  # scale_grad_by_freq is not the true derivative, by design
    Spec("embedding_double_backward", lambda m, w, i: _double_backward(
        m, lambda m, w, i: F(m).embedding(i, w, padding_idx=0) * m.arange(3.0), w, i),
         [(T(5, 3), I(4, 2))], ops=["embedding_backward"]),
    Spec("embedding_bag", lambda m, w, i: F(m).embedding_bag(i, w, mode="sum"),
         [(T(6, 3), I(4, 3, high=6))], ops=[]),
]

SPECS += [
    # torch's CrossMapLRN2d backward is not its forward's derivative (see ops/nn/norm.py):
    # ember matches torch's gradient, so no finite-difference check
    Spec("cross_map_lrn2d", lambda m, x: (m.nn.CrossMapLRN2d(5, 0.1, 0.75, 1.5)(x),
                                          m.nn.CrossMapLRN2d(2)(x), m.nn.CrossMapLRN2d(4)(x)),
         [(T(2, 7, 3, 2),), (T(1, 3, 2, 2, dtype="float64"),)], gradcheck=False),
    Spec("conv_tbc", lambda m, x, w, b: (m.conv_tbc(x, w, b), m.nn.functional.conv_tbc(x, w, b,
                                                                                       1)),
         [(T(5, 2, 3), T(2, 3, 4), T(4))], ops=["convolution"]),
    Spec("convolution", lambda m, x, w, b: (
        m.convolution(x, w, b, (1, 1), (1, 0), (1, 1), False, (0, 0), 1),
        m.convolution(x, w.transpose(0, 1), None, (2, 1), (0, 0), (1, 1), True, (1, 0), 1)),
         [(T(2, 3, 5, 4), T(4, 3, 3, 2), T(4))], ops=["convolution", "conv_input_grad"]),
]
