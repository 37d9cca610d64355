"""Public callables with no gradient to check, each with a one-word reason."""

from __future__ import annotations


def _all(reason: str, names: str) -> dict[str, str]:
    return dict.fromkeys(names.split(), reason)


NOT_DIFFERENTIABLE: dict[str, str] = {
    **_all(
        "integer",
        "argmax argmin argsort argwhere bincount bucketize count_nonzero nonzero nonzero_static "
        "searchsorted unique unique_consecutive unravel_index tril_indices triu_indices matrix_rank "
        "gcd lcm bitwise_and bitwise_or bitwise_xor bitwise_not bitwise_left_shift bitwise_right_shift "
        "F.one_hot Tensor.bool Tensor.byte Tensor.char Tensor.int Tensor.long Tensor.short "
        "Tensor.gcd_ Tensor.lcm_ Tensor.bitwise_and_ Tensor.bitwise_or_ Tensor.bitwise_xor_ "
        "Tensor.bitwise_left_shift_ Tensor.bitwise_right_shift_",
    ),
    **_all("histogram", "histc histogram histogramdd"),
    **_all("compiler", "compile"),
    **_all(
        "autocast",
        "autocast_decrement_nesting autocast_increment_nesting clear_autocast_cache get_autocast_dtype "
        "is_autocast_cache_enabled is_autocast_enabled set_autocast_cache_enabled set_autocast_dtype "
        "set_autocast_enabled",
    ),
    **_all(
        "step", "floor_divide Tensor.floor_divide_ heaviside Tensor.heaviside_ nextafter Tensor.nextafter_"
    ),
    **_all(
        "comparison",
        "eq ne lt le gt ge isclose allclose equal isfinite isinf isnan isneginf isposinf isreal isin "
        "signbit all any logical_and logical_or logical_xor logical_not Tensor.logical_not_",
    ),
    **_all(
        "creation",
        "arange empty empty_like eye full full_like linspace logspace ones ones_like zeros zeros_like "
        "tensor as_tensor scalar_tensor from_dlpack from_numpy fft.fftfreq fft.rfftfreq Tensor.new_empty "
        "Tensor.new_full Tensor.new_ones Tensor.new_tensor Tensor.new_zeros",
    ),
    **_all(
        "random",
        "bernoulli multinomial normal rand rand_like randint randint_like randn randn_like randperm "
        "Tensor.normal_ Tensor.uniform_ Tensor.bernoulli_ Tensor.cauchy_ Tensor.exponential_ "
        "Tensor.geometric_ Tensor.log_normal_ Tensor.random_",
    ),
    # PyTorch: "cannot resize variables that require grad"
    **_all("resize", "Tensor.resize_ Tensor.resize_as_"),
    **_all(
        "state",
        "are_deterministic_algorithms_enabled get_default_device get_default_dtype get_num_threads "
        "get_printoptions get_rng_state initial_seed is_grad_enabled is_inference_mode_enabled "
        "manual_seed seed set_default_device set_default_dtype set_num_threads set_printoptions "
        "set_rng_state printoptions use_deterministic_algorithms load save "
        "is_deterministic_algorithms_warn_only_enabled is_anomaly_enabled is_anomaly_check_nan_enabled",
    ),
    **_all(
        "metadata",
        "broadcast_shapes can_cast promote_types result_type numel is_complex is_conj "
        "is_floating_point is_neg is_nonzero is_same_size is_tensor Tensor.data_ptr Tensor.dim "
        "Tensor.element_size Tensor.is_contiguous Tensor.is_inference Tensor.nelement Tensor.size "
        "Tensor.storage_offset Tensor.stride",
    ),
    # PyTorch: "the derivative for '...' is not implemented"
    **_all(
        "unimplemented",
        "special.airy_ai special.bessel_j0 special.bessel_j1 special.bessel_y0 special.bessel_y1 "
        "special.modified_bessel_k0 special.modified_bessel_k1 special.scaled_modified_bessel_k0 "
        "special.scaled_modified_bessel_k1 linalg.ldl_factor linalg.ldl_factor_ex",
    ),
    **_all("host", "Tensor.item Tensor.numpy Tensor.tolist"),
    **_all(
        "autograd",
        "Tensor.backward Tensor.detach Tensor.detach_ detach_copy Tensor.register_hook Tensor.register_post_accumulate_grad_hook "
        "Tensor.requires_grad_ Tensor.retain_grad",
    ),
}
