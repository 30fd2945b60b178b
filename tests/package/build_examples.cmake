# ctest -R package:examples: agf as a project outside it sees it. Installs this build into a fresh prefix,
# configures and builds examples/custom_op and examples/tiny_translate against that prefix alone with
# find_package(agf CONFIG REQUIRED), then runs them: the custom op's Catch2 test (its gradcheck must pass,
# and must reject a wrong backward), a short training that saves a checkpoint, and the installed agf
# program translating with that checkpoint.
#
#   cmake -DAGF_SOURCE_DIR=... -DAGF_BUILD_DIR=... -DWORK_DIR=... -DGENERATOR=... -DCXX_COMPILER=...
#         [-DCOMPILER_LAUNCHER=ccache] -P build_examples.cmake
cmake_minimum_required(VERSION 3.24)

foreach(required AGF_SOURCE_DIR AGF_BUILD_DIR WORK_DIR GENERATOR CXX_COMPILER)
  if(NOT DEFINED ${required})
    message(FATAL_ERROR "build_examples.cmake: -D${required}=... is missing")
  endif()
endforeach()

# step(NAME [QUIET] COMMAND...): runs the command, its output going to the test's log (with QUIET, only when
# it fails); a failure fails the test, naming the step.
function(step name)
  set(command ${ARGN})
  set(capture)
  if(ARGV1 STREQUAL "QUIET")
    list(POP_FRONT command)
    set(capture OUTPUT_VARIABLE output ERROR_VARIABLE output)
  endif()
  message(STATUS "---- ${name}")
  string(TIMESTAMP start "%s")
  execute_process(COMMAND ${command} RESULT_VARIABLE status ${capture})
  string(TIMESTAMP stop "%s")
  math(EXPR seconds "${stop} - ${start}")
  if(NOT status EQUAL 0)
    message(FATAL_ERROR "${output}${name} failed (${status}) after ${seconds} s")
  endif()
  message(STATUS "${name}: ${seconds} s")
endfunction()

file(REMOVE_RECURSE ${WORK_DIR})
set(prefix ${WORK_DIR}/prefix)
step("install agf into ${prefix}" QUIET ${CMAKE_COMMAND} --install ${AGF_BUILD_DIR} --prefix ${prefix})

set(launcher)
if(COMPILER_LAUNCHER)
  set(launcher -DCMAKE_CXX_COMPILER_LAUNCHER=${COMPILER_LAUNCHER})
endif()
foreach(example custom_op tiny_translate)
  set(example_build ${WORK_DIR}/${example})
  # Only the fresh prefix may provide agf: no user package registry. Debug: the examples compile in half the
  # time (Catch2's main is most of it), with assertions on in agf's inline code; libagf.a stays optimized.
  step("configure examples/${example}" ${CMAKE_COMMAND} -S ${AGF_SOURCE_DIR}/examples/${example} -B ${example_build}
       -G ${GENERATOR} -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_COMPILER=${CXX_COMPILER} ${launcher}
       -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF)
  file(STRINGS ${example_build}/CMakeCache.txt agf_dir REGEX "^agf_DIR:")
  if(NOT agf_dir MATCHES "=${prefix}/")
    message(FATAL_ERROR "examples/${example} found agf outside the fresh prefix: ${agf_dir}")
  endif()
  step("build examples/${example}" ${CMAKE_COMMAND} --build ${example_build} -j 2)
endforeach()

step("custom_op: the Catch2 test" ${WORK_DIR}/custom_op/test_smooth_max)
set(checkpoint ${WORK_DIR}/tiny_translate.safetensors)
step("tiny_translate: train and save" ${WORK_DIR}/tiny_translate/tiny_translate ${checkpoint} 60)

# The checkpoint is one the agf program reads: the installed `agf translate` translates with it.
file(WRITE ${WORK_DIR}/sources.txt "the dog is small\nthe cat is old\n")
execute_process(COMMAND ${prefix}/bin/agf translate --checkpoint ${checkpoint} INPUT_FILE ${WORK_DIR}/sources.txt
                OUTPUT_VARIABLE translations RESULT_VARIABLE status)
string(REGEX MATCHALL "[^\n]*\n" lines "${translations}")
list(LENGTH lines line_count)
if(NOT status EQUAL 0 OR NOT line_count EQUAL 2)
  message(FATAL_ERROR "agf translate with tiny_translate's checkpoint: status ${status}, output:\n${translations}")
endif()
message(STATUS "agf translate with tiny_translate's checkpoint:\n${translations}")
