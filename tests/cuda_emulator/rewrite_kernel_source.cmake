# cmake -DINPUT=kernels.cu -DOUTPUT=kernels.cu.cpp -P rewrite_kernel_source.cmake
#
# Rewrites a CUDA source into C++ that the host compiler builds against the CUDA emulator:
#   kernel<<<grid, block, shared, stream>>>(args)  ->  kernel | ::agf::emulator::Launch(grid, block, shared, stream).args(args)
#   extern __shared__ T name[];                    ->  T* name = reinterpret_cast<T*>(::agf::emulator::dynamic_shared_memory());
#   __global__ void __launch_bounds__(N) f(...) {  ->  __global__ void f(...) { ::agf::emulator::check_launch_bounds(N);
# and includes tests/cuda_emulator/emulated_cuda.h first. Lines keep their numbers (#line names the
# original file), so compiler errors and stack traces point into the real source.
file(READ "${INPUT}" text)
string(REPLACE "<<<" "| ::agf::emulator::Launch(" text "${text}")
string(REGEX REPLACE ">>>[ \t\r\n]*\\(" ").args(" text "${text}")
string(REGEX REPLACE
       "extern __shared__ (__align__\\([0-9]+\\) )?([A-Za-z_][A-Za-z0-9_: ]*[A-Za-z0-9_]) ([A-Za-z_][A-Za-z0-9_]*)\\[\\];"
       "\\2* \\3 = reinterpret_cast<\\2*>(::agf::emulator::dynamic_shared_memory());" text "${text}")
# A kernel's bound (its expression may hold one level of parentheses): a launch of more threads per block
# fails on a GPU (too many resources requested), so each thread checks it on entry here.
string(REGEX REPLACE "__launch_bounds__\\(([^()]*(\\([^()]*\\)[^()]*)*)\\)([^{;]*)\\{"
       "\\3{ ::agf::emulator::check_launch_bounds(\\1);" text "${text}")
if(text MATCHES "<<<|>>>|extern __shared__|__launch_bounds__\\(")
  message(FATAL_ERROR "${INPUT}: a launch, dynamic shared array or launch bound the emulator rewrite does not understand")
endif()
file(WRITE "${OUTPUT}" "#include \"tests/cuda_emulator/emulated_cuda.h\"\n#line 1 \"${INPUT}\"\n${text}")
