"""ember.backends.cpu (torch.backends.cpu): which vector instructions the CPU kernels use.

ember's kernels are NumPy's, which picks its SIMD code at run time; `get_cpu_capability()`
names the widest set NumPy found here in torch's words: "AVX512" (AVX-512 F, BW, VL and DQ),
"AVX2", "NEON"/"SVE" on ARM, or "DEFAULT"."""
__all__ = ["get_cpu_capability"]


def get_cpu_capability():
    """'AVX512', 'AVX2', 'SVE', 'NEON' or 'DEFAULT', from NumPy's run-time CPU detection."""
    from numpy._core._multiarray_umath import __cpu_features__ as features

    if all(features.get(f) for f in ("AVX512F", "AVX512BW", "AVX512VL", "AVX512DQ")):
        return "AVX512"
    if features.get("AVX2") and features.get("FMA3"):
        return "AVX2"
    if features.get("SVE"):
        return "SVE"
    if features.get("ASIMD") or features.get("NEON"):
        return "NEON"
    return "DEFAULT"
