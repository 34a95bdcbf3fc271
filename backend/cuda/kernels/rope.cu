// rope.cu: rotary position embedding, in place, with llama.cpp's theta:
// theta = scale · pos · base^(-2i/dims) / factor[i] for rotated pair i.
#include "common.cuh"

// rope_f32 rotates x (n, cols), heads of headDim; row r is at position pos[r].
// Adjacent pairs (2i, 2i+1) unless neox, then (i, i+dims/2). factors may be null.
// grid (n, ceil(heads·dims/2 / 256)); one thread per rotated pair.
extern "C" __global__ void rope_f32(float *x, const int *pos, const float *factors, int cols, int headDim,
                                    int dims, float base, float scale, int neox) {
	const int r = blockIdx.x, half = dims / 2;
	const int p = blockIdx.y * blockDim.x + threadIdx.x;
	const int heads = cols / headDim;
	if (p >= heads * half) return;
	const int h = p / half, i = p % half;
	const float thetaScale = powf(base, -2.0f / (float)dims);
	float theta = scale * (float)pos[r] * powf(thetaScale, (float)i);
	if (factors != 0) theta /= factors[i];
	const float c = cosf(theta), s = sinf(theta);
	float *v = x + (size_t)r * cols + (size_t)h * headDim;
	const int a = neox ? i : 2 * i, b = neox ? i + half : 2 * i + 1;
	const float x0 = v[a], x1 = v[b];
	v[a] = x0 * c - x1 * s;
	v[b] = x0 * s + x1 * c;
}
