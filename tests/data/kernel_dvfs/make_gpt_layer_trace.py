#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Writes gpt_layer_trace.json: a SYNTHETIC torch.profiler Chrome trace of one GPT-3-XL layer
(forward + backward) on one GPU.

No GPU was available when the fixture was made, and a CPU-only torch.profiler trace has no CUDA
kernel events, so the events are written here following the format torch.profiler's
export_chrome_trace() produces (Kineto): complete events ("ph": "X") with "ts"/"dur" in
microseconds, "cat": "cpu_op" / "cuda_runtime" / "kernel" / "gpu_user_annotation", "External id"
and "correlation" args linking an op to its launch and kernel. Kernel names follow the families
PyTorch uses on Ampere (cuBLAS GEMMs, vectorized elementwise, layer norm, fused attention).
Durations are rough magnitudes for hidden 2048, 24 heads, 4 x 2048 tokens; they are NOT
measurements. Run with no arguments to regenerate.
"""
import json
import pathlib

GEMM = "ampere_fp16_s16816gemm_fp16_128x128_ldg8_f2f_stages_32x5_{}"
ELEM = "void at::native::vectorized_elementwise_kernel<4, {}, at::detail::Array<char*, 3> >(int, {}, at::detail::Array<char*, 3>)"
LN_F = "void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<c10::Half, float>(int, float, c10::Half const*, c10::Half const*, c10::Half const*, float*, float*, c10::Half*)"
LN_B = "void at::native::(anonymous namespace)::layer_norm_grad_input_kernel_vectorized<c10::Half, float>(c10::Half const*, c10::Half const*, float const*, float const*, c10::Half const*, c10::Half*, int)"
LN_W = "void at::native::(anonymous namespace)::GammaBetaBackwardCUDAKernel<c10::Half, float>(long, long, c10::Half const*, c10::Half const*, float const*, float const*, c10::Half*, c10::Half*)"
ATT_F = "fmha_cutlassF_f16_aligned_64x64_rf_sm80(PyTorchMemEffAttention::AttentionKernel<cutlass::half_t, cutlass::arch::Sm80, true, 64, 64, 64, true, true>::Params)"
ATT_B = "fmha_cutlassB_f16_aligned_64x64_k64_sm80(PyTorchMemEffAttention::AttentionBackwardKernel<cutlass::arch::Sm80, cutlass::half_t, true, false, true, 64, 64, 64, false>::Params)"
REDUCE = "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<c10::Half, at::native::func_wrapper_t<c10::Half, at::native::sum_functor<c10::Half, float, c10::Half>::operator()(at::TensorIterator&)::{lambda(float, float)#1}>, unsigned int, c10::Half, 4> >(at::native::ReduceOp<c10::Half, at::native::func_wrapper_t<c10::Half, at::native::sum_functor<c10::Half, float, c10::Half>::operator()(at::TensorIterator&)::{lambda(float, float)#1}>, unsigned int, c10::Half, 4>)"


def elem(functor):
    return ELEM.format(functor, functor)


# (op, kernel name, duration in microseconds)
FORWARD = [
    ("aten::native_layer_norm", LN_F, 95.0),
    ("aten::addmm", GEMM.format("tn"), 2850.0),  # QKV projection
    ("aten::_efficient_attention_forward", ATT_F, 2400.0),
    ("aten::addmm", GEMM.format("tn"), 960.0),  # attention output projection
    ("aten::native_dropout", elem("at::native::(anonymous namespace)::fused_dropout_kernel_vec"), 160.0),
    ("aten::add", elem("at::native::CUDAFunctor_add<c10::Half>"), 140.0),
    ("aten::native_layer_norm", LN_F, 95.0),
    ("aten::addmm", GEMM.format("tn"), 3800.0),  # MLP up
    ("aten::gelu", elem("at::native::GeluCUDAKernelImpl"), 520.0),
    ("aten::addmm", GEMM.format("tn"), 3800.0),  # MLP down
    ("aten::native_dropout", elem("at::native::(anonymous namespace)::fused_dropout_kernel_vec"), 160.0),
    ("aten::add", elem("at::native::CUDAFunctor_add<c10::Half>"), 140.0),
]
BACKWARD = [
    ("aten::add", elem("at::native::CUDAFunctor_add<c10::Half>"), 140.0),
    ("aten::native_dropout_backward", elem("at::native::masked_scale_kernel"), 150.0),
    ("aten::mm", GEMM.format("nn"), 3800.0),  # MLP down, input grad
    ("aten::mm", GEMM.format("nt"), 3900.0),  # MLP down, weight grad
    ("aten::sum", REDUCE, 120.0),
    ("aten::gelu_backward", elem("at::native::GeluBackwardCUDAKernelImpl"), 700.0),
    ("aten::mm", GEMM.format("nn"), 3800.0),  # MLP up, input grad
    ("aten::mm", GEMM.format("nt"), 3900.0),  # MLP up, weight grad
    ("aten::sum", REDUCE, 120.0),
    ("aten::native_layer_norm_backward", LN_B, 190.0),
    ("aten::native_layer_norm_backward", LN_W, 110.0),
    ("aten::add", elem("at::native::CUDAFunctor_add<c10::Half>"), 140.0),
    ("aten::native_dropout_backward", elem("at::native::masked_scale_kernel"), 150.0),
    ("aten::mm", GEMM.format("nn"), 960.0),  # attention out, input grad
    ("aten::mm", GEMM.format("nt"), 1000.0),  # attention out, weight grad
    ("aten::sum", REDUCE, 60.0),
    ("aten::_efficient_attention_backward", ATT_B, 6100.0),
    ("aten::mm", GEMM.format("nn"), 2850.0),  # QKV, input grad
    ("aten::mm", GEMM.format("nt"), 2950.0),  # QKV, weight grad
    ("aten::sum", REDUCE, 130.0),
    ("aten::native_layer_norm_backward", LN_B, 190.0),
    ("aten::native_layer_norm_backward", LN_W, 110.0),
    ("aten::add", elem("at::native::CUDAFunctor_add<c10::Half>"), 140.0),
]

PID_CPU, TID_CPU, PID_GPU, STREAM = 4242, 4242, 0, 7
T0 = 1718000000000000.0  # Kineto timestamps are absolute microseconds


def build():
    events = []
    cpu = T0
    gpu = T0 + 50.0
    ext = 1
    corr = 100
    for pass_name, ops in (("forward", FORWARD), ("backward", BACKWARD)):
        cpu_begin, gpu_begin = cpu, gpu
        for op, kernel, dur in ops:
            events.append({"ph": "X", "cat": "cpu_op", "name": op, "pid": PID_CPU, "tid": TID_CPU,
                           "ts": cpu, "dur": 12.0, "args": {"External id": ext}})
            events.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel",
                           "pid": PID_CPU, "tid": TID_CPU, "ts": cpu + 4.0, "dur": 5.0,
                           "args": {"External id": ext, "correlation": corr}})
            gpu = max(gpu, cpu + 9.0) + 2.5
            events.append({"ph": "X", "cat": "kernel", "name": kernel, "pid": PID_GPU,
                           "tid": STREAM, "ts": gpu, "dur": dur,
                           "args": {"External id": ext, "device": 0, "stream": STREAM,
                                    "correlation": corr, "queued": 0}})
            gpu += dur
            cpu += 15.0
            ext += 1
            corr += 1
        events.append({"ph": "X", "cat": "user_annotation", "name": pass_name, "pid": PID_CPU,
                       "tid": TID_CPU, "ts": cpu_begin - 1.0, "dur": cpu - cpu_begin + 2.0,
                       "args": {"External id": ext}})
        events.append({"ph": "X", "cat": "gpu_user_annotation", "name": pass_name,
                       "pid": PID_GPU, "tid": STREAM, "ts": gpu_begin,
                       "dur": gpu - gpu_begin + 1.0, "args": {"External id": ext}})
        ext += 1
        cpu = gpu + 20.0
    return {"schemaVersion": 1, "deviceProperties": [{"id": 0, "name": "NVIDIA GeForce RTX 3080 Ti",
                                                      "totalGlobalMem": 12636061696,
                                                      "computeMajor": 8, "computeMinor": 6,
                                                      "numSms": 80}],
            "traceEvents": events, "traceName": "synthetic_gpt3_xl_layer",
            "displayTimeUnit": "ms"}


if __name__ == "__main__":
    out = pathlib.Path(__file__).with_name("gpt_layer_trace.json")
    out.write_text(json.dumps(build(), indent=1) + "\n")
