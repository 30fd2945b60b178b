#pragma once
// agf's own op checks, which op_checks() (autograd/gradcheck.cpp) adds to the registry on its first call.
//
// Added by a call rather than by static objects that register themselves: agf is a static library
// (libagf.a), and a linker takes from an archive only the objects that something refers to. A file that
// holds nothing but self-registering statics is referred to by nothing, so a program linking the archive
// would silently run without its checks. op_checks() refers to these two functions, and that pulls in
// their files.
#include <vector>

#include "autograd/gradcheck.h"

namespace agf {

// Every differentiable op of autograd/functions.h (autograd/op_checks.cpp).
void add_function_op_checks(std::vector<OpCheck>& checks);

// The attention op: every scheme × PCM-V × causal, cross-attention shapes, dropout, edge cases
// (autograd/attention_checks.cpp).
void add_attention_op_checks(std::vector<OpCheck>& checks);

}  // namespace agf
