# The few CMake functions every folder uses to declare its programs and their tests.
# A folder's CMakeLists.txt reads like its files: one add_step/add_program per program, then
# the tests of those programs, each with gpu_test or host_test.

# add_program(TARGET SOURCE [EXCLUDE_FROM_ALL] [LINK lib...]): one program built from SOURCE
# with the shared headers in common/ and the headers of SOURCE's own folder, linked with CUB's
# baselines and the LINK libraries (a step's own compiled CUB calls).
# The code compiles as an object library, TARGET_code, that waits for no other target, and
# TARGET links it: make builds a target's dependencies before any of its sources, so a
# program that compiled its own code would wait for CUB's baselines
# (results/logs/h200/build_timing.txt). Compile settings (include folders, definitions, an
# imported library such as NCCL::nccl) therefore go on TARGET_code; a library built here goes
# on TARGET (through LINK), or TARGET_code would wait for it.
function(add_program target source)
  cmake_parse_arguments(P "EXCLUDE_FROM_ALL" "" "LINK" ${ARGN})
  if(P_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "add_program(${target}): unknown arguments ${P_UNPARSED_ARGUMENTS}")
  endif()
  set(exclude)
  if(P_EXCLUDE_FROM_ALL)
    set(exclude EXCLUDE_FROM_ALL)
  endif()
  add_library(${target}_code OBJECT ${exclude} ${source})
  get_filename_component(path ${source} ABSOLUTE)
  get_filename_component(folder ${path} DIRECTORY)
  target_include_directories(${target}_code PRIVATE ${PROJECT_SOURCE_DIR}/common ${folder})
  # -lineinfo: compute-sanitizer and ncu name source lines
  target_compile_options(${target}_code PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:-lineinfo>)
  add_executable(${target} ${exclude})
  target_link_libraries(${target} PRIVATE ${target}_code Threads::Threads cub_baselines ${P_LINK})
  set_target_properties(${target} PROPERTIES LINKER_LANGUAGE CUDA LADDER_LINK "${P_LINK}")
endfunction()

# add_cub_library(TARGET SOURCE...): a static library of a step's own CUB calls, compiled on
# its own so that CUB's device-wide templates (seconds a file) compile in parallel with the
# programs; the programs get it through LINK.
function(add_cub_library target)
  add_library(${target} STATIC ${ARGN})
  target_include_directories(${target} PRIVATE ${PROJECT_SOURCE_DIR}/common ${CMAKE_CURRENT_SOURCE_DIR})
  target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:-lineinfo>)
endfunction()

# add_cli_program(TARGET SOURCE [LINK lib...]): a program with the common command line (cli.hpp);
# the host test of flag errors, --help and the no-GPU exit (tests/test_cli_errors.sh) covers it.
function(add_cli_program target source)
  add_program(${target} ${source} ${ARGN})
  add_dependencies(steps ${target})
  set_property(GLOBAL APPEND PROPERTY LADDER_CLI_PROGRAMS ${target})
endfunction()

# add_step(stepNN_name [LINK lib...]): the step's main program, steps/stepNN_name/stepNN_name.cu;
# the short name (`make step03` leaves ./step03 beside ./step03_atomic_one_pass); and its
# standard test: every variant, both types, odd sizes and misaligned pointers, verified.
set(CHECK_SIZES "1,2,3,31,32,33,255,256,257,1023,4099,2^20-1,2^20+1,2^24+7")
function(add_step step)
  add_cli_program(${step} ${step}.cu ${ARGN})
  string(SUBSTRING ${step} 0 6 short)
  add_custom_target(${short} ALL
    COMMAND ${CMAKE_COMMAND} -E create_symlink ${step} ${CMAKE_BINARY_DIR}/${short}
    DEPENDS ${step}
    COMMENT "./${short} -> ${step}")
  add_dependencies(steps ${short})
  set_property(GLOBAL APPEND PROPERTY LADDER_STEPS ${step})
  gpu_test(gpu_verify_${step} COMMAND ${step} --check --variant all --dtype all --offset 0,1,2,3 --n ${CHECK_SIZES})
endfunction()

# gpu_test(NAME COMMAND cmd... [LARGE] [SERIAL] [PROPERTIES prop value...]): a test that needs a
# GPU. Label gpu (and large: past 2^31 elements or a long sweep, run by `test.sh --large`);
# exit 77 (no GPU, or a GPU feature missing) is a skip. A large test also skips when the GPU
# has too little memory (the program's one-line "need X GiB of GPU memory").
function(gpu_test name)
  cmake_parse_arguments(T "LARGE;SERIAL" "" "COMMAND;PROPERTIES" ${ARGN})
  add_test(NAME ${name} COMMAND ${T_COMMAND})
  set(labels gpu)
  if(T_LARGE)
    list(APPEND labels large)
    set_tests_properties(${name} PROPERTIES RUN_SERIAL TRUE SKIP_REGULAR_EXPRESSION "need [0-9.]+ GiB of GPU memory")
  endif()
  if(T_SERIAL)
    set_tests_properties(${name} PROPERTIES RUN_SERIAL TRUE)
  endif()
  set_tests_properties(${name} PROPERTIES LABELS "${labels}" SKIP_RETURN_CODE 77 ${T_PROPERTIES})
endfunction()

# host_test(NAME COMMAND cmd... [PROPERTIES prop value...]): a test that runs everywhere (CI
# too). Label host: `ctest -L host` runs them all. Exit 77 is a skip (a tool that is missing).
function(host_test name)
  cmake_parse_arguments(T "" "" "COMMAND;PROPERTIES" ${ARGN})
  add_test(NAME ${name} COMMAND ${T_COMMAND})
  set_tests_properties(${name} PROPERTIES LABELS host SKIP_RETURN_CODE 77 ${T_PROPERTIES})
endfunction()
