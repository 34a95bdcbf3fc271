// types.cuh: FOR_EACH_WEIGHT(X) calls X(name, struct) for every weight format, so that
// each kernel family instantiates one extern "C" entry per format, named <family>_<name>.
#pragma once
#include "dequant.cuh"

#define FOR_EACH_WEIGHT(X) \
	X(f32, F32W) X(f16, F16W) X(bf16, BF16W) X(q4_0, Q4_0W) X(q4_1, Q4_1W) X(q5_0, Q5_0W) \
	X(q5_1, Q5_1W) X(q8_0, Q8_0W) X(q2_k, Q2_KW) X(q3_k, Q3_KW) X(q4_k, Q4_KW) X(q5_k, Q5_KW) \
	X(q6_k, Q6_KW)

#define FOR_EACH_QUANT(X) \
	X(q4_0, Q4_0W) X(q4_1, Q4_1W) X(q5_0, Q5_0W) X(q5_1, Q5_1W) X(q8_0, Q8_0W) X(q2_k, Q2_KW) \
	X(q3_k, Q3_KW) X(q4_k, Q4_KW) X(q5_k, Q5_KW) X(q6_k, Q6_KW)
