# cmake -DINPUT=kernels.cu -DOUTPUT=kernels.cu.cpp -P rewrite_kernel_source.cmake
#
# Rewrites a CUDA source into C++ that the host compiler builds against the CUDA emulator:
#   kernel<<<grid, block, shared, stream>>>(args)  ->  kernel | ::agf::emulator::Launch(grid, block, shared, stream).args(args)
#   extern __shared__ T name[];                    ->  T* name = reinterpret_cast<T*>(::agf::emulator::dynamic_shared_memory());
# and includes tests/cuda_emulator/emulated_cuda.h first. Lines keep their numbers (#line names the
# original file), so compiler errors and stack traces point into the real source.
file(READ "${INPUT}" text)
string(REPLACE "<<<" "| ::agf::emulator::Launch(" text "${text}")
string(REGEX REPLACE ">>>[ \t\r\n]*\\(" ").args(" text "${text}")
string(REGEX REPLACE
       "extern __shared__ (__align__\\([0-9]+\\) )?([A-Za-z_][A-Za-z0-9_: ]*[A-Za-z0-9_]) ([A-Za-z_][A-Za-z0-9_]*)\\[\\];"
       "\\2* \\3 = reinterpret_cast<\\2*>(::agf::emulator::dynamic_shared_memory());" text "${text}")
if(text MATCHES "<<<|>>>|extern __shared__")
  message(FATAL_ERROR "${INPUT}: a launch or dynamic shared array the emulator rewrite does not understand")
endif()
file(WRITE "${OUTPUT}" "#include \"tests/cuda_emulator/emulated_cuda.h\"\n#line 1 \"${INPUT}\"\n${text}")
