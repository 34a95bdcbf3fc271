// pdl.cuh: programmatic dependent launch (PDL, sm_90 and newer).
//
// A kernel launched with CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION may start
// before the kernel ahead of it in the stream has finished: as soon as every block of that
// kernel has called pdl_trigger (or exited). It must then call pdl_wait, which returns once
// the kernel ahead has completed and its writes are visible, before it reads anything that
// kernel may write or writes anything it may read. The row norms first load their weight row
// (norm.cu), the quantized mat-vecs their first weights into registers (matvec.cu: an
// L2 prefetch of them instead was measured slower, the register loads faster). Kernels of
// modules launched without PDL may still call pdl_trigger (the decode attention, SwiGLU),
// so that the mat-vec after them launches, and loads its weights, while they run.
//
// The instructions exist from sm_90 on. Code compiled for an older target (the compute_80
// PTX, the sm_80..sm_89 machine code) has neither them nor the module's marker kernel
// (PDL_MARKER): package cuda launches a module's kernels with the attribute only when the
// marker loaded, so every kernel of such a module must call pdl_wait before touching
// memory. Without the attribute, pdl_wait returns at once and pdl_trigger does nothing.
#pragma once

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
// pdl_wait waits for the kernel ahead in the stream to complete (griddepcontrol.wait).
static __device__ __forceinline__ void pdl_wait() { asm volatile("griddepcontrol.wait;" ::: "memory"); }
// pdl_trigger lets the next kernel launch once every block of this one has called it.
static __device__ __forceinline__ void pdl_trigger() { asm volatile("griddepcontrol.launch_dependents;" ::: "memory"); }
// PDL_MARKER defines the module's marker kernel, present only in code that has PDL.
#define PDL_MARKER(name) \
	extern "C" __global__ void name() {}
#else
static __device__ __forceinline__ void pdl_wait() {}
static __device__ __forceinline__ void pdl_trigger() {}
#define PDL_MARKER(name)
#endif

// pdl_start lets the next kernel launch and waits for the previous one: the prologue of a
// kernel that reads only its predecessors' results.
static __device__ __forceinline__ void pdl_start() {
	pdl_trigger();
	pdl_wait();
}
